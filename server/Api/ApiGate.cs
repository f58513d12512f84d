using System.Net;
using Diagnostics.Contracts;
using Diagnostics.Server.Configuration;
using Diagnostics.Studio.Security;

namespace Diagnostics.Server.Api;

/// <summary>
/// The HTTP listener's door. Bound to loopback only and with no key set, requests pass, but only
/// with a loopback Host header (a web page that rebinds its own DNS name to 127.0.0.1 is
/// refused). Bound beyond loopback, or with http-api-key set, every request must present the key
/// (Authorization: Bearer KEY, or X-Api-Key: KEY), compared in constant time, or the studio's
/// session cookie from its login page; a browser asking for a studio page without either is sent
/// to that page. The login page and the studio's static files (no data in them) are open. Requests
/// that change something are refused when a browser says they come from another site.
/// </summary>
public sealed class ApiGate(RequestDelegate next, ServerConfig config, DataServer server)
{
    /// <summary>True when some HTTP bind address reaches beyond this host.</summary>
    public static bool IsExposed(ServerConfig config)
    {
        foreach (string address in config.HttpBind)
            if (!IsLoopbackName(address.TrimStart('-')))
                return true;
        return false;
    }

    /// <summary>True when every request must be authenticated: exposed, or a key set anyway.</summary>
    public static bool KeyRequired(ServerConfig config) => IsExposed(config) || config.HttpApiKey is not null;

    /// <summary>Why the HTTP settings cannot be used, or null: an exposed listener needs a key.</summary>
    public static string? Problem(ServerConfig config) =>
        config.HttpPort != 0 && IsExposed(config) && config.HttpApiKey is null
            ? $"http-bind {string.Join(' ', config.HttpBind)} exposes the HTTP API beyond loopback: set http-api-key (every request must then present it), or bind it to 127.0.0.1"
            : null;

    public Task InvokeAsync(HttpContext context)
    {
        if (context.Features.Get<InProcessRequest>() is not null)
            return next(context);
        // The monitor's push carries the token from the announcement file, and only that: it needs
        // neither the API key nor a session, and the token opens nothing else.
        if (context.Request.Path.Equals(MonitorAnnouncement.IngestPath, StringComparison.Ordinal))
        {
            string presented = context.Request.Headers[MonitorAnnouncement.TokenHeader].ToString();
            if (server.Announcement is { Problem: null } announcement && presented.Length > 0 && StudioAccess.Matches(presented, announcement.Token))
                return next(context);
            server.Monitor.Reject();
            return Refuse(context, StatusCodes.Status401Unauthorized, $"the monitor must present the token from the server's announcement file in {MonitorAnnouncement.TokenHeader}");
        }
        bool exposed = IsExposed(config);
        if (!exposed && !IsLoopbackName(context.Request.Host.Host))
            return Refuse(context, StatusCodes.Status403Forbidden, "host not allowed: the HTTP API answers loopback names only");
        if (KeyRequired(config) && !HasKey(context, config.HttpApiKey) && context.User.Identity?.IsAuthenticated != true && !IsOpen(context.Request.Path))
        {
            if (IsPageNavigation(context.Request))
            {
                string returnUrl = context.Request.PathBase + context.Request.Path + context.Request.QueryString;
                context.Response.Redirect($"{StudioLogin.LoginPath}?returnUrl={Uri.EscapeDataString(returnUrl)}");
                return Task.CompletedTask;
            }
            context.Response.Headers.WWWAuthenticate = "Bearer";
            return Refuse(context, StatusCodes.Status401Unauthorized, "authentication required: present the API key as 'Authorization: Bearer <key>' or 'X-Api-Key: <key>'");
        }
        if (!HttpMethods.IsGet(context.Request.Method) && !HttpMethods.IsHead(context.Request.Method) && IsCrossSite(context))
            return Refuse(context, StatusCodes.Status403Forbidden, "cross-site requests may not change the server");
        return next(context);
    }

    /// <summary>What anyone may fetch: the login page, and the studio's and framework's static files.</summary>
    private static bool IsOpen(PathString path) =>
        path.Equals(StudioLogin.LoginPath, StringComparison.OrdinalIgnoreCase)
        || path.StartsWithSegments("/_content/Diagnostics.Studio", StringComparison.Ordinal)
        || path.StartsWithSegments("/_framework", StringComparison.Ordinal);

    /// <summary>A browser opening a studio page (not the API, not a script's fetch): it gets the login page instead of a 401.</summary>
    private static bool IsPageNavigation(HttpRequest request) =>
        HttpMethods.IsGet(request.Method)
        && !request.Path.StartsWithSegments("/api", StringComparison.Ordinal)
        && !request.Path.StartsWithSegments("/metrics", StringComparison.Ordinal)
        && request.Headers.Accept.ToString().Contains("text/html", StringComparison.Ordinal);

    private static bool HasKey(HttpContext context, string? key)
    {
        if (key is null)
            return false;
        string? presented = null;
        string authorization = context.Request.Headers.Authorization.ToString();
        if (authorization.StartsWith("Bearer ", StringComparison.OrdinalIgnoreCase))
            presented = authorization["Bearer ".Length..].Trim();
        else if (context.Request.Headers.TryGetValue("X-Api-Key", out var header))
            presented = header.ToString();
        return presented is not null && StudioAccess.Matches(presented, key);
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
