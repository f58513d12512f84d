using Diagnostics.Studio;
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
        services.AddSingleton<IStudioSource>(provider => new LiveStudioSource(server, provider.GetRequiredService<LiveHistoryFeed>()));
        services.AddSingleton<PackageLibrary>();
        return services;
    }

    public static WebApplication MapStudio(this WebApplication app)
    {
        app.UseAntiforgery();
        app.MapStaticAssets();
        app.MapRazorComponents<App>().AddInteractiveServerRenderMode();
        return app;
    }
}
