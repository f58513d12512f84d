using Microsoft.AspNetCore.Http;

namespace Diagnostics.Studio.Security;

/// <summary>
/// Who may use the studio, decided by the host: on loopback with no secret set anyone on this
/// machine; otherwise only who logs in with a secret from the server's configuration.
/// </summary>
public interface IStudioAccess
{
    bool LoginRequired { get; }

    /// <summary>
    /// True when <paramref name="secret"/> is one the server accepts (compared in constant time); a
    /// wrong one counts as a failed login from <paramref name="context"/>'s address.
    /// </summary>
    bool Accepts(string secret, HttpContext context);
}
