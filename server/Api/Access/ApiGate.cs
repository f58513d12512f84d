using System.Net;
using Diagnostics.Contracts;
using Diagnostics.Server.Configuration;
using Diagnostics.Studio.Security;

namespace Diagnostics.Server.Api.Access;

/// <summary>
/// The HTTP listener's door, after routing: what a request needs is what its routed endpoint
/// declares (<see cref="RequiredCredentialMetadata"/>), never a comparison of path strings, so
/// /API/Monitor/Ingest/ needs what /api/monitor/ingest needs; an endpoint that declares nothing is
/// refused to everyone. Operator endpoints: bound to loopback with no secret set, requests pass,
/// but only with a loopback Host header (a web page that rebinds its own DNS name to 127.0.0.1 is
/// refused). Exposed, or with http-api-key or requirepass set, every request must present the key
/// or the password (Authorization: Bearer, or X-Api-Key), compared in constant time, or the
/// studio's session cookie; a browser asking for a studio page without either is sent to the login
/// page. Wrong secrets are rate-limited per address (<see cref="AuthFailureLimiter"/>). The monitor's
/// ingest takes its token and nothing else. Requests that change something are refused when a
/// browser says they come from another site.
/// </summary>
public sealed class ApiGate(RequestDelegate next, ServerConfig config, DataServer server, AuthFailureLimiter limiter)
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
    /// True when every operator request must be authenticated: exposed, or a key or a password set
    /// (as Redis asks for AUTH before SLOWLOG or CLIENT LIST, whoever connects).
    /// </summary>
    public static bool SecretRequired(ServerConfig config) => IsExposed(config) || config.HttpApiKey is not null || config.RequirePass is not null;

    /// <summary>Why the HTTP settings cannot be used, or null: an exposed listener needs a key.</summary>
    public static string? Problem(ServerConfig config) =>
        config.HttpPort != 0 && IsExposed(config) && config.HttpApiKey is null
            ? $"http-bind {string.Join(' ', config.HttpBind)} exposes the HTTP API beyond loopback: set http-api-key (every request must then present it), or bind it to 127.0.0.1"
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
        if (credential == HttpCredential.Operator && SecretRequired(config) && context.User.Identity?.IsAuthenticated != true)
        {
            if (Presented(context) is not { } secret)
                return AskForCredentials(context);
            switch (limiter.Attempt(context, () => StudioAccess.IsSecret(secret, config), "wrong API key or password", out var retryAfter))
            {
                case AuthAttempt.RateLimited:
                    return AuthFailureLimiter.RefuseAsync(context, retryAfter);
                case AuthAttempt.Rejected:
                    context.Response.Headers.WWWAuthenticate = "Bearer";
                    return Refuse(context, StatusCodes.Status401Unauthorized, "the API key or password presented is not accepted");
            }
        }
        // The login form's post is a guess like a wrong bearer: refused unseen while the address is over
        // its budget (the page itself charges a miss, through StudioAccess).
        if (credential == HttpCredential.None && HttpMethods.IsPost(context.Request.Method) && IsLoginPage(endpoint)
            && limiter.IsOverBudget(AuthFailureLimiter.Source(context)))
            return limiter.RefuseOverBudgetAsync(context);
        if (!HttpMethods.IsGet(context.Request.Method) && !HttpMethods.IsHead(context.Request.Method) && IsCrossSite(context))
            return Refuse(context, StatusCodes.Status403Forbidden, "cross-site requests may not change the server");
        return next(context);
    }

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
        if (server.Announcement is { Problem: null } announcement && presented.Length > 0 && StudioAccess.Matches(presented, announcement.Token))
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
        return Refuse(context, StatusCodes.Status401Unauthorized, "authentication required: present the API key or the password as 'Authorization: Bearer <secret>' or 'X-Api-Key: <secret>'");
    }

    private static bool IsLoginPage(Endpoint? endpoint) =>
        endpoint is RouteEndpoint route && string.Equals(route.RoutePattern.RawText, StudioLogin.LoginPath, StringComparison.OrdinalIgnoreCase);

    /// <summary>A browser opening a studio page (not the API, not a script's fetch): it gets the login page instead of a 401.</summary>
    private static bool IsPageNavigation(HttpRequest request) =>
        HttpMethods.IsGet(request.Method)
        && !request.Path.StartsWithSegments("/api", StringComparison.OrdinalIgnoreCase)
        && !request.Path.StartsWithSegments("/metrics", StringComparison.OrdinalIgnoreCase)
        && request.Headers.Accept.ToString().Contains("text/html", StringComparison.Ordinal);

    /// <summary>The secret a request presents (Authorization: Bearer, or X-Api-Key), or null.</summary>
    private static string? Presented(HttpContext context)
    {
        string authorization = context.Request.Headers.Authorization.ToString();
        if (authorization.StartsWith("Bearer ", StringComparison.OrdinalIgnoreCase))
            return authorization["Bearer ".Length..].Trim();
        return context.Request.Headers.TryGetValue("X-Api-Key", out var header) ? header.ToString() : null;
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
