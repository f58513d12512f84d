using System.Security.Claims;
using Diagnostics.Studio.Security;
using Microsoft.AspNetCore.Http;

namespace Diagnostics.Server.Tests.Studio;

/// <summary>
/// The access a component test renders a page under: no login, and a fixed grant (everything by
/// default). The server's own access (HttpLogins, against ACL users) is tested over HTTP and in the browser.
/// </summary>
public sealed class FixedStudioAccess : IStudioAccess
{
    public StudioGrant Current { get; set; } = new("user 'tester'", "tester", StudioPermissions.All);
    public StudioPermissions PackageNeeds { get; set; } = StudioPermissions.Watch | StudioPermissions.Clients | StudioPermissions.SlowLog
        | StudioPermissions.Keys | StudioPermissions.Config | StudioPermissions.AclLog;
    public bool LoginRequired => false;
    public ClaimsPrincipal? LogIn(string? user, string secret, HttpContext context) => null;
    public StudioGrant Grant(ClaimsPrincipal principal) => Current;
}
