using Diagnostics.Server.Api.Access;
using Diagnostics.Studio;
using Diagnostics.Studio.Security;
using Microsoft.AspNetCore.Antiforgery;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.DataProtection;
using Diagnostics.Studio.Sources;

namespace Diagnostics.Server.Studio;

/// <summary>The studio on the HTTP listener: Blazor with interactive server rendering, its static assets, and the live source.</summary>
public static class StudioHosting
{
    public static IServiceCollection AddStudio(this IServiceCollection services, DataServer server)
    {
        services.AddRazorComponents().AddInteractiveServerComponents();
        // Circuits, antiforgery tokens and login cookies are protected with keys kept in memory
        // only: nothing secret is written to disk, and a restart simply asks people to log in again.
        services.AddDataProtection().UseEphemeralDataProtectionProvider();
        services.AddSingleton(_ => new LiveHistoryFeed(server.Sampler));
        services.AddSingleton<IStudioSource>(provider => new LiveStudioSource(server, provider.GetRequiredService<LiveHistoryFeed>(), provider.GetRequiredService<ILogger<LiveStudioSource>>()));
        services.AddSingleton(new PackageLibrary(() => server.Config.PackageLimits));
        services.AddSingleton(provider => new AuthFailureLimiter(server.Stats, provider.GetRequiredService<ILogger<AuthFailureLimiter>>()));
        services.AddSingleton(provider => new HttpLogins(server, provider.GetRequiredService<AuthFailureLimiter>()));
        services.AddSingleton<IStudioAccess>(provider => provider.GetRequiredService<HttpLogins>());
        services.AddAuthentication(StudioLogin.Scheme).AddCookie(StudioLogin.Scheme, cookie =>
        {
            cookie.Cookie.Name = StudioLogin.CookieName;
            cookie.Cookie.HttpOnly = true;
            cookie.Cookie.SameSite = SameSiteMode.Strict;
            cookie.Cookie.SecurePolicy = CookieSecurePolicy.SameAsRequest;
            cookie.LoginPath = StudioLogin.LoginPath;
            cookie.ExpireTimeSpan = TimeSpan.FromHours(8);
            cookie.SlidingExpiration = true;
        });
        services.AddCascadingAuthenticationState();
        return services;
    }

    public static WebApplication MapStudio(this WebApplication app)
    {
        app.UseAntiforgery();
        // Static files hold no data: anyone may fetch them (the login page needs its stylesheet). A
        // group, so the rule also covers the endpoints MapStaticAssets adds on its own (the
        // development-time file fallback).
        app.MapGroup("").RequireCredential(HttpCredential.None).MapStaticAssets();
        // A page needs a login; what it shows, it checks in the circuit against the login's grant
        // (the layout refuses a login without watch, a page each section), so a refusal is a page
        // that says what is missing rather than a bare 403.
        var pages = app.MapRazorComponents<App>().AddInteractiveServerRenderMode()
            .RequireCredential(HttpCredential.Operator).RequirePermission(StudioPermissions.None);
        // After every other convention, so these win: the login page and the framework's scripts are open.
        pages.Finally(OpenLoginAndFramework);
        app.MapPost(StudioLogin.LogoutPath, LogOutAsync).RequireCredential(HttpCredential.Operator).RequirePermission(StudioPermissions.None);
        return app;
    }

    private static void OpenLoginAndFramework(EndpointBuilder endpoint)
    {
        if (endpoint is RouteEndpointBuilder { RoutePattern.RawText: { } route }
            && (route.Equals(StudioLogin.LoginPath, StringComparison.OrdinalIgnoreCase) || route.TrimStart('/').StartsWith("_framework/", StringComparison.OrdinalIgnoreCase)))
            endpoint.Metadata.Add(new RequiredCredentialMetadata(HttpCredential.None));
    }

    private static async Task<IResult> LogOutAsync(HttpContext context, IAntiforgery antiforgery)
    {
        if (!await antiforgery.IsRequestValidAsync(context))
            return Results.BadRequest("the log-out form's antiforgery token is missing or invalid: reload the page and try again");
        await context.SignOutAsync(StudioLogin.Scheme);
        return Results.Redirect(StudioLogin.LoginPath);
    }
}
