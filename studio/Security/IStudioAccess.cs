using System.Security.Claims;
using Microsoft.AspNetCore.Http;

namespace Diagnostics.Studio.Security;

/// <summary>
/// Who may use the studio and what they may do, decided by the host: on loopback with no secret
/// set, the default user without a login; otherwise who logs in as an ACL user or with the API key.
/// </summary>
public interface IStudioAccess
{
    bool LoginRequired { get; }

    /// <summary>
    /// The session for a login, or null when refused: <paramref name="user"/> empty means the API key
    /// or the default user's password. A refusal counts as a failed login from <paramref name="context"/>'s
    /// address and goes to ACL LOG.
    /// </summary>
    ClaimsPrincipal? LogIn(string? user, string secret, HttpContext context);

    /// <summary>What downloading or opening this server's debug package needs: everything its parts show.</summary>
    StudioPermissions PackageNeeds { get; }

    /// <summary>What <paramref name="principal"/> may do now (<see cref="StudioGrant.Ended"/> when its login no longer holds).</summary>
    StudioGrant Grant(ClaimsPrincipal principal);
}
