using Diagnostics.Server.Api;
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
        services.AddSingleton<IStudioAccess>(new StudioAccess(server.Config));
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
        app.MapStaticAssets();
        app.MapRazorComponents<App>().AddInteractiveServerRenderMode();
        app.MapPost(StudioLogin.LogoutPath, LogOutAsync);
        return app;
    }

    private static async Task<IResult> LogOutAsync(HttpContext context, IAntiforgery antiforgery)
    {
        if (!await antiforgery.IsRequestValidAsync(context))
            return Results.BadRequest("the log-out form's antiforgery token is missing or invalid: reload the page and try again");
        await context.SignOutAsync(StudioLogin.Scheme);
        return Results.Redirect(StudioLogin.LoginPath);
    }
}
