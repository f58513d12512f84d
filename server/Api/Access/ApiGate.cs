using System.Net;
using System.Security.Claims;
using Diagnostics.Contracts;
using Diagnostics.Server.Configuration;
using Diagnostics.Studio.Security;
using Microsoft.AspNetCore.Authentication;

namespace Diagnostics.Server.Api.Access;

/// <summary>
/// The HTTP listener's door, after routing: what a request needs is what its routed endpoint
/// declares (<see cref="RequiredCredentialMetadata"/>, <see cref="RequiredPermissionMetadata"/>),
/// never a comparison of path strings, so /API/Monitor/Ingest/ needs what /api/monitor/ingest
/// needs; an endpoint that declares nothing is refused to everyone. Operator endpoints: bound to
/// loopback with no API key and a default user without a password, requests pass as the default
/// user, but only with a loopback Host header (a web page that rebinds its own DNS name to
/// 127.0.0.1 is refused). Otherwise every request logs in (<see cref="HttpLogins"/>): an ACL user
/// with Basic, the API key or the default user's password as a bearer (or X-Api-Key), or the
/// studio's session cookie; a browser asking for a studio page without one is sent to the login
/// page. Then the login must hold the endpoint's permissions (read from the user's ACL rules, or
/// the API key's scope); a refusal names what is missing and goes to ACL LOG. Wrong secrets are
/// rate-limited per address (<see cref="AuthFailureLimiter"/>). The monitor's ingest takes its
/// token and nothing else. Requests that change something are refused when a browser says they
/// come from another site.
/// </summary>
public sealed class ApiGate(RequestDelegate next, ServerConfig config, DataServer server, HttpLogins logins, AuthFailureLimiter limiter)
{
    /// <summary>True when some HTTP bind address reaches beyond this host.</summary>
    public static bool IsExposed(ServerConfig config)
    {
        foreach (string address in config.HttpBind)
            if (!IsLoopbackName(address.TrimStart('-')))
                return true;
        return false;
    }

    /// <summary>
    /// Why the HTTP settings cannot be used, or null: an exposed listener needs some way to log in,
    /// the API key or a password (requirepass, an aclfile, user lines).
    /// </summary>
    public static string? Problem(ServerConfig config) =>
        config.HttpPort != 0 && IsExposed(config) && config.HttpApiKey is null && config.RequirePass is null && config.AclFile.Length == 0 && config.UserLines.Count == 0
            ? $"http-bind {string.Join(' ', config.HttpBind)} exposes the HTTP API beyond loopback with no way to log in: set http-api-key (a machine credential), requirepass or ACL users with passwords (user lines or aclfile), or bind it to 127.0.0.1"
            : null;

    public Task InvokeAsync(HttpContext context)
    {
        if (context.Features.Get<InProcessRequest>() is not null)
            return next(context);
        if (!context.Request.IsHttps && !config.HttpAllowPlaintext && !IsLoopback(context.Connection.RemoteIpAddress))
            return RefusePlaintext(context);
        var endpoint = context.GetEndpoint();
        // No endpoint matched: only a 404 follows, but it is still the operator's to see.
        var credential = endpoint is null ? HttpCredential.Operator : endpoint.Metadata.GetMetadata<RequiredCredentialMetadata>()?.Credential;
        if (credential is null)
            return Refuse(context, StatusCodes.Status403Forbidden, $"'{endpoint!.DisplayName}' declares no access rule, so nobody may use it");
        if (credential == HttpCredential.MonitorToken)
            return AdmitMonitor(context);
        if (!IsExposed(config) && !IsLoopbackName(context.Request.Host.Host))
            return Refuse(context, StatusCodes.Status403Forbidden, "host not allowed: the HTTP API answers loopback names only");
        if (credential == HttpCredential.Operator)
            return AdmitOperatorAsync(context, endpoint);
        // The login form's post is a guess like a wrong bearer: refused unseen while the address is over
        // its budget (the page itself charges a miss, through HttpLogins).
        if (HttpMethods.IsPost(context.Request.Method) && IsLoginPage(endpoint) && limiter.IsOverBudget(AuthFailureLimiter.Source(context)))
            return limiter.RefuseOverBudgetAsync(context);
        return Continue(context);
    }

    /// <summary>Who the request is (a session, credentials it presents, or the default user when no login is needed), then whether they may.</summary>
    private async Task AdmitOperatorAsync(HttpContext context, Endpoint? endpoint)
    {
        StudioGrant? grant = null;
        if (context.User.Identity?.IsAuthenticated == true)
        {
            grant = logins.Grant(context.User);
            if (ReferenceEquals(grant, StudioGrant.Ended))
            {
                // The login behind the cookie no longer holds: the session is over.
                await context.SignOutAsync(StudioLogin.Scheme);
                context.User = new ClaimsPrincipal(new ClaimsIdentity());
                grant = null;
            }
        }
        if (grant is null && !logins.LoginRequired)
            grant = logins.Grant(context.User);
        if (grant is null)
        {
            if (Presented(context) is not var (user, secret, via))
            {
                await AskForCredentials(context);
                return;
            }
            switch (logins.Attempt(context, user, secret, via, out var principal, out var retryAfter))
            {
                case AuthAttempt.RateLimited:
                    await AuthFailureLimiter.RefuseAsync(context, retryAfter);
                    return;
                case AuthAttempt.Rejected:
                    context.Response.Headers.WWWAuthenticate = "Bearer";
                    await Refuse(context, StatusCodes.Status401Unauthorized, "the credentials presented are not accepted");
                    return;
            }
            context.User = principal!;
            grant = logins.Grant(principal!);
        }
        var needed = Needed(endpoint);
        if (needed is null)
        {
            await Refuse(context, StatusCodes.Status403Forbidden, $"'{endpoint!.DisplayName}' declares no permission, so nobody may use it");
            return;
        }
        if (!grant.Has(needed.Value))
        {
            logins.Refused(context, grant, StudioPermission.Missing(needed.Value, grant.Permissions));
            await Refuse(context, StatusCodes.Status403Forbidden, grant.Refusal(needed.Value, Describe(endpoint)));
            return;
        }
        context.Features.Set(grant);
        await Continue(context);
    }

    private Task Continue(HttpContext context)
    {
        if (!HttpMethods.IsGet(context.Request.Method) && !HttpMethods.IsHead(context.Request.Method) && IsCrossSite(context))
            return Refuse(context, StatusCodes.Status403Forbidden, "cross-site requests may not change the server");
        return next(context);
    }

    /// <summary>The permissions the routed endpoint declares (a package's contents' too), or null when it declares none.</summary>
    private StudioPermissions? Needed(Endpoint? endpoint)
    {
        // No endpoint matched: the 404 tells nothing but that the path is unknown.
        if (endpoint is null)
            return StudioPermissions.Watch;
        var declared = endpoint.Metadata.GetOrderedMetadata<RequiredPermissionMetadata>();
        if (declared.Count == 0)
            return null;
        var needed = StudioPermissions.None;
        foreach (var required in declared)
            needed |= required.Permissions | (required.PackageContents ? server.DebugPackage.Permissions : StudioPermissions.None);
        return needed;
    }

    private static string Describe(Endpoint? endpoint) =>
        endpoint is RouteEndpoint route ? $"use {route.RoutePattern.RawText}" : "use this endpoint";

    /// <summary>
    /// Plain HTTP from beyond loopback would carry secrets, sessions and values in clear: a browser
    /// opening a page is sent to the HTTPS listener when there is one, anything else is refused
    /// (a client that sent a secret this way should learn it, not have it quietly forwarded).
    /// </summary>
    private Task RefusePlaintext(HttpContext context)
    {
        if (config.HttpTlsPort != 0 && (HttpMethods.IsGet(context.Request.Method) || HttpMethods.IsHead(context.Request.Method)))
        {
            var target = new UriBuilder("https", context.Request.Host.Host, config.HttpTlsPort)
            {
                Path = context.Request.PathBase + context.Request.Path,
                Query = context.Request.QueryString.Value ?? "",
            };
            context.Response.StatusCode = StatusCodes.Status308PermanentRedirect;
            context.Response.Headers.Location = target.Uri.AbsoluteUri;
            return Task.CompletedTask;
        }
        return Refuse(context, StatusCodes.Status403Forbidden, config.HttpTlsPort != 0
            ? $"plain HTTP is served to loopback clients only: use https on port {config.HttpTlsPort}"
            : "plain HTTP is served to loopback clients only: set http-tls-port (HTTPS), or http-allow-plaintext yes behind a TLS-terminating proxy");
    }

    private static bool IsLoopback(IPAddress? address) =>
        address is not null && (IPAddress.IsLoopback(address) || (address.IsIPv4MappedToIPv6 && IPAddress.IsLoopback(address.MapToIPv4())));

    /// <summary>The monitor's push carries the token from the announcement file, and only that: it needs neither the API key nor a session, and the token opens nothing else.</summary>
    private Task AdmitMonitor(HttpContext context)
    {
        string presented = context.Request.Headers[MonitorAnnouncement.TokenHeader].ToString();
        if (server.Announcement is { Problem: null } announcement && presented.Length > 0 && Secrets.Matches(presented, announcement.Token))
            return next(context);
        server.Monitor.Reject();
        return Refuse(context, StatusCodes.Status401Unauthorized, $"the monitor must present the token from the server's announcement file in {MonitorAnnouncement.TokenHeader}");
    }

    /// <summary>No secret and no session: a browser opening a studio page goes to the login page, anything else gets a 401.</summary>
    private static Task AskForCredentials(HttpContext context)
    {
        if (IsPageNavigation(context.Request))
        {
            string returnUrl = context.Request.PathBase + context.Request.Path + context.Request.QueryString;
            context.Response.Redirect($"{StudioLogin.LoginPath}?returnUrl={Uri.EscapeDataString(returnUrl)}");
            return Task.CompletedTask;
        }
        context.Response.Headers.WWWAuthenticate = "Bearer";
        return Refuse(context, StatusCodes.Status401Unauthorized, "authentication required: log in as an ACL user with 'Authorization: Basic' (user:password), or present the API key or the default user's password as 'Authorization: Bearer <secret>' or 'X-Api-Key: <secret>'");
    }

    private static bool IsLoginPage(Endpoint? endpoint) =>
        endpoint is RouteEndpoint route && string.Equals(route.RoutePattern.RawText, StudioLogin.LoginPath, StringComparison.OrdinalIgnoreCase);

    /// <summary>A browser opening a studio page (not the API, not a script's fetch): it gets the login page instead of a 401.</summary>
    private static bool IsPageNavigation(HttpRequest request) =>
        HttpMethods.IsGet(request.Method)
        && !request.Path.StartsWithSegments("/api", StringComparison.OrdinalIgnoreCase)
        && !request.Path.StartsWithSegments("/metrics", StringComparison.OrdinalIgnoreCase)
        && request.Headers.Accept.ToString().Contains("text/html", StringComparison.Ordinal);

    /// <summary>
    /// The credentials a request presents, or null: Basic (an ACL user and its password), or a
    /// bearer / X-Api-Key (the API key, else the default user's password; no user named).
    /// </summary>
    private static (string? User, string Secret, string Via)? Presented(HttpContext context)
    {
        string authorization = context.Request.Headers.Authorization.ToString();
        if (authorization.StartsWith("Bearer ", StringComparison.OrdinalIgnoreCase))
            return (null, authorization["Bearer ".Length..].Trim(), "bearer");
        if (authorization.StartsWith("Basic ", StringComparison.OrdinalIgnoreCase) && BasicCredentials.Decode(authorization.AsSpan("Basic ".Length)) is var (user, password))
            return (user, password, "basic");
        return context.Request.Headers.TryGetValue("X-Api-Key", out var header) ? (null, header.ToString(), "api-key") : null;
    }

    private static bool IsCrossSite(HttpContext context)
    {
        if (context.Request.Headers.TryGetValue("Sec-Fetch-Site", out var site) && site.ToString() == "cross-site")
            return true;
        if (!context.Request.Headers.TryGetValue("Origin", out var origin) || origin.ToString() is not { Length: > 0 } text)
            return false;
        return !Uri.TryCreate(text, UriKind.Absolute, out var uri) || !string.Equals(uri.Authority, context.Request.Host.Value, StringComparison.OrdinalIgnoreCase);
    }

    private static bool IsLoopbackName(string host) =>
        host.Equals("localhost", StringComparison.OrdinalIgnoreCase)
        || (IPAddress.TryParse(host.Trim('[', ']'), out var ip) && IPAddress.IsLoopback(ip));

    private static Task Refuse(HttpContext context, int status, string message)
    {
        context.Response.StatusCode = status;
        context.Response.ContentType = "text/plain; charset=utf-8";
        return context.Response.WriteAsync(message + "\n");
    }
}
