namespace Diagnostics.Studio.Security;

/// <summary>
/// Who may use the studio, decided by the host: on loopback with no key anyone on this machine;
/// exposed, only who logs in with a secret from the server's configuration.
/// </summary>
public interface IStudioAccess
{
    bool LoginRequired { get; }

    /// <summary>True when <paramref name="secret"/> is one the server accepts (compared in constant time).</summary>
    bool Accepts(string secret);
}
