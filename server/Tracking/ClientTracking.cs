namespace Diagnostics.Server.Tracking;

/// <summary>
/// One client's CLIENT TRACKING settings (Redis's CLIENT_TRACKING_* flags, redirection and
/// prefixes). Replaced whole by each CLIENT TRACKING ON, so a writer on another thread reading it
/// sees one consistent set; only the broken-redirect mark and the CACHING answer change in place.
/// </summary>
public sealed class ClientTracking(long redirectId, bool broadcast, bool optIn, bool optOut, bool noLoop, byte[][] prefixes)
{
    /// <summary>The client invalidations go to instead of this one, or 0.</summary>
    public long RedirectId { get; } = redirectId;
    public bool Broadcast { get; } = broadcast;
    public bool OptIn { get; } = optIn;
    public bool OptOut { get; } = optOut;
    public bool NoLoop { get; } = noLoop;

    /// <summary>BCAST prefixes, in byte order (CLIENT TRACKINGINFO lists them so); one empty prefix when none was given.</summary>
    public byte[][] Prefixes { get; } = prefixes;

    /// <summary>The redirect target was gone when an invalidation was due (CLIENT LIST flag R).</summary>
    public volatile bool BrokenRedirect;

    /// <summary>
    /// CLIENT CACHING YES (OPTIN) or NO (OPTOUT) was given for the next command. Only the client's
    /// own commands read and write it.
    /// </summary>
    public bool CachingGiven;

    /// <summary>Whether the keys of the read that just ran are remembered for this client.</summary>
    public bool RemembersReads => !Broadcast && !(OptIn && !CachingGiven) && !(OptOut && CachingGiven);
}
