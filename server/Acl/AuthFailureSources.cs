namespace Diagnostics.Server.Acl;

/// <summary>One source of failed authentications: the address and the user it tried, how often and when.</summary>
public sealed record AuthFailureSource(string Address, string User, long Count, long FirstUnixMs, long LastUnixMs);

/// <summary>
/// Failed AUTH / HELLO AUTH by source address and user named, for INFO acl, the studio and the
/// doctor (who is guessing which password). Bounded: past <see cref="Capacity"/> pairs the one
/// that failed least recently makes room, so a scan of many addresses cannot grow it. Failures are
/// rare next to commands, so a lock is fine here.
/// </summary>
public sealed class AuthFailureSources
{
    public const int Capacity = 128;
    private readonly Lock _gate = new();
    private readonly Dictionary<(string Address, string User), AuthFailureSource> _sources = [];

    public void Failed(string address, string user)
    {
        long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        // The user name comes from the client: kept short so a long one costs nothing.
        if (user.Length > 64)
            user = user[..64];
        lock (_gate)
        {
            var key = (address, user);
            if (_sources.TryGetValue(key, out var known))
            {
                _sources[key] = known with { Count = known.Count + 1, LastUnixMs = now };
                return;
            }
            if (_sources.Count >= Capacity)
            {
                var oldest = default((string, string));
                long oldestMs = long.MaxValue;
                foreach (var (k, source) in _sources)
                    if (source.LastUnixMs < oldestMs)
                        (oldest, oldestMs) = (k, source.LastUnixMs);
                _sources.Remove(oldest);
            }
            _sources[key] = new AuthFailureSource(address, user, 1, now, now);
        }
    }

    /// <summary>The sources with the most failures first (then the most recent), at most <paramref name="count"/>.</summary>
    public List<AuthFailureSource> Top(int count)
    {
        lock (_gate)
            return [.. _sources.Values.OrderByDescending(s => s.Count).ThenByDescending(s => s.LastUnixMs).Take(count)];
    }

    public int Count
    {
        get
        {
            lock (_gate)
                return _sources.Count;
        }
    }

    /// <summary>CONFIG RESETSTAT.</summary>
    public void Reset()
    {
        lock (_gate)
            _sources.Clear();
    }
}
