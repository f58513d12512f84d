using System.Security.Claims;
using System.Text;
using Diagnostics.Server.Acl;
using Diagnostics.Server.Network;
using Diagnostics.Studio.Security;

namespace Diagnostics.Server.Api.Access;

/// <summary>
/// The HTTP side of the ACL: a login (the studio's form, Basic, a bearer) is an ACL user with a
/// password, or the API key, a machine credential with its own scope (http-api-key-scope). A
/// session carries who logged in and a stamp of the credential, checked on every request, so
/// deleting a user, turning it off or changing its passwords ends its sessions. What a login may
/// do is read from the user's current rules (<see cref="StudioPermission"/>). A user without a
/// password (nopass) never logs in over HTTP: its only HTTP access is the loopback-open mode.
/// Failed logins are rate-limited per address, counted per address and user, and go to ACL LOG
/// with the context "http".
/// </summary>
public sealed class HttpLogins : IStudioAccess
{
    public const string AclLogContext = "http";
    private const string KindClaim = "diagnostics/kind";
    private const string StampClaim = "diagnostics/stamp";
    private const string UserKind = "user";
    private const string KeyKind = "key";

    private readonly DataServer _server;
    private readonly AuthFailureLimiter _limiter;

    public HttpLogins(DataServer server, AuthFailureLimiter limiter)
    {
        _server = server;
        _limiter = limiter;
    }

    /// <summary>
    /// True when every operator request must log in: exposed, an API key set, or a default user
    /// that needs a password (as Redis asks for AUTH before SLOWLOG or CLIENT LIST, whoever connects).
    /// </summary>
    public bool LoginRequired => ApiGate.IsExposed(_server.Config) || _server.Config.HttpApiKey is not null || !_server.Acl.DefaultNeedsNoPassword;

    public StudioPermissions PackageNeeds => _server.DebugPackage.Permissions;

    public ClaimsPrincipal? LogIn(string? user, string secret, HttpContext context) =>
        Attempt(context, user, secret, "login", out var principal, out _) == AuthAttempt.Accepted ? principal : null;

    /// <summary>
    /// Checks a login unless the sender's address is over its budget: <paramref name="user"/> empty
    /// means the API key, then the default user's password (as AUTH with one argument).
    /// <paramref name="via"/> names how it came (login, basic, bearer) in ACL LOG.
    /// </summary>
    public AuthAttempt Attempt(HttpContext context, string? user, string secret, string via, out ClaimsPrincipal? principal, out TimeSpan retryAfter)
    {
        ClaimsPrincipal? found = null;
        // What ACL LOG and the failure sources keep of the name is bounded too.
        string named = string.IsNullOrEmpty(user) ? "default" : user.Length > MaxUserLength ? user[..MaxUserLength] + "..." : user;
        var attempt = _limiter.Attempt(context, () => (found = Check(user, secret)) is not null, $"wrong {via} for user '{named}'", out retryAfter);
        if (attempt == AuthAttempt.Rejected)
        {
            _server.AuthFailures.Failed(AuthFailureLimiter.Source(context).ToString(), named);
            _server.AclLog.Add(AclDenial.Auth, AclLogContext, via, named, ClientInfo(context));
        }
        principal = found;
        return attempt;
    }

    /// <summary>Records a refused request in ACL LOG as Redis records a refused command: the permission's command, the user, who asked.</summary>
    public void Refused(HttpContext context, StudioGrant grant, StudioPermissions missing)
    {
        foreach (var info in StudioPermission.All)
            if ((missing & info.Permission) != 0)
            {
                _server.AclLog.Add(AclDenial.Command, AclLogContext, info.Command, grant.User ?? "(api-key)", ClientInfo(context));
                _server.Stats.AclRefused(AclDenial.Command);
                return;
            }
    }

    /// <summary>
    /// The longest user name and secret compared: a login form may post megabytes, and a longer
    /// one is wrong without being hashed (ACL GENPASS's passwords are 64 characters).
    /// </summary>
    private const int MaxUserLength = 512, MaxSecretLength = 1024;

    private ClaimsPrincipal? Check(string? user, string secret)
    {
        if (secret.Length > MaxSecretLength || user?.Length > MaxUserLength)
            return null;
        if (string.IsNullOrEmpty(user))
        {
            if (_server.Config.HttpApiKey is { } key && Secrets.Matches(secret, key))
                return Principal(KeyKind, "", Secrets.Stamp(key));
            user = "default";
        }
        if (_server.Acl.Find(user) is { Deleted: false, Current: { Enabled: true, NoPass: false } found } && found.Accepts(Encoding.UTF8.GetBytes(secret)))
            return Principal(UserKind, found.Name, found.CredentialStamp);
        return null;
    }

    private static ClaimsPrincipal Principal(string kind, string name, string stamp) =>
        new(new ClaimsIdentity([new Claim(ClaimTypes.Name, name), new Claim(KindClaim, kind), new Claim(StampClaim, stamp)], StudioLogin.Scheme));

    public StudioGrant Grant(ClaimsPrincipal principal)
    {
        if (principal.Identity?.IsAuthenticated != true)
            return LoginRequired ? StudioGrant.Ended : DefaultGrant();
        string? stamp = principal.FindFirst(StampClaim)?.Value;
        string name = principal.Identity.Name ?? "";
        switch (principal.FindFirst(KindClaim)?.Value)
        {
            case KeyKind:
                return _server.Config.HttpApiKey is { } key && stamp == Secrets.Stamp(key)
                    ? new StudioGrant("the API key", null, _server.Config.HttpApiKeyScope)
                    : StudioGrant.Ended;
            case UserKind:
                return _server.Acl.Find(name) is { Deleted: false, Current: { Enabled: true, NoPass: false } user } && stamp == user.CredentialStamp
                    ? new StudioGrant($"user '{user.Name}'", user.Name, Permissions(user))
                    : StudioGrant.Ended;
            default:
                return StudioGrant.Ended;
        }
    }

    /// <summary>No login needed (loopback, no key, a default user without a password): requests act as the default user, with its rules.</summary>
    private StudioGrant DefaultGrant()
    {
        var user = _server.Acl.Default.Current;
        return new StudioGrant("default user", user.Name, user.Enabled ? Permissions(user) : StudioPermissions.None);
    }

    /// <summary>The permissions whose commands some selector of <paramref name="user"/> allows.</summary>
    public StudioPermissions Permissions(AclUser user) => _server.StudioPermissions.Of(user);

    private static string EndPoint(System.Net.IPAddress? ip, int port) => ip is null ? "" : EndPointText.Format(new System.Net.IPEndPoint(ip, port));

    /// <summary>ACL LOG's client-info for an HTTP request: the addresses and the route (never the raw path, which a link chooses).</summary>
    private static string ClientInfo(HttpContext context)
    {
        var connection = context.Connection;
        string route = context.GetEndpoint() is RouteEndpoint endpoint ? endpoint.RoutePattern.RawText ?? "" : "";
        return $"addr={EndPoint(connection.RemoteIpAddress, connection.RemotePort)} laddr={EndPoint(connection.LocalIpAddress, connection.LocalPort)} http={context.Request.Method} {route}";
    }
}
