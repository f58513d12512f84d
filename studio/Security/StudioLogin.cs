using System.Security.Claims;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.Components.Authorization;
using Microsoft.AspNetCore.Http;

namespace Diagnostics.Studio.Security;

/// <summary>The studio's cookie session: signed in by the login form, out by the log-out button.</summary>
public static class StudioLogin
{
    public const string Scheme = CookieAuthenticationDefaults.AuthenticationScheme;
    public const string CookieName = "diagnostics-studio";
    public const string LoginPath = "/login";
    public const string LogoutPath = "/logout";

    public static Task SignInAsync(HttpContext context, ClaimsPrincipal principal) => context.SignInAsync(Scheme, principal);

    /// <summary>The circuit's login (the request's, while prerendering); nobody when there is none.</summary>
    public static ClaimsPrincipal UserOf(Task<AuthenticationState>? authentication) =>
        authentication is { IsCompletedSuccessfully: true } state ? state.Result.User : new ClaimsPrincipal(new ClaimsIdentity());

    /// <summary>Where to go after logging in: a path on this server only, never another site.</summary>
    public static string SafeReturnUrl(string? returnUrl) =>
        returnUrl is { Length: > 0 } url && url[0] == '/' && !url.StartsWith("//", StringComparison.Ordinal) && !url.StartsWith("/\\", StringComparison.Ordinal)
            ? url
            : "/";
}
