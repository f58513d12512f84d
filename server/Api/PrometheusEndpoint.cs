using Diagnostics.Server.Api.Access;
using Diagnostics.Server.Diagnostics.Meters;
using Diagnostics.Studio.Security;
using OpenTelemetry;
using OpenTelemetry.Metrics;

namespace Diagnostics.Server.Api;

/// <summary>GET /metrics: the server's meters and the runtime's own ("System.Runtime": GC, thread pool, JIT) for Prometheus.</summary>
public static class PrometheusEndpoint
{
    public const string ContentType = "text/plain; version=0.0.4; charset=utf-8";

    public static IServiceCollection AddPrometheusMetrics(this IServiceCollection services)
    {
        var exporter = new PrometheusTextExporter();
        services.AddSingleton(exporter);
        // Owned by the container, so it is disposed (and stops listening to the meters) with the host.
        services.AddSingleton(_ => Sdk.CreateMeterProviderBuilder()
            .AddMeter(ServerMeters.MeterName, "System.Runtime")
            .AddReader(new BaseExportingMetricReader(exporter) { TemporalityPreference = MetricReaderTemporalityPreference.Cumulative })
            .Build());
        return services;
    }

    public static void MapPrometheusScrape(this WebApplication app)
    {
        // Build the provider now, so instruments are being listened to before the first scrape.
        app.Services.GetRequiredService<MeterProvider>();
        var exporter = app.Services.GetRequiredService<PrometheusTextExporter>();
        // Scrapers present the API key or the password as a bearer token when the server has one.
        app.MapGet("/metrics", () => Results.Text(exporter.Scrape(), ContentType))
            .RequireCredential(HttpCredential.Operator).RequirePermission(StudioPermissions.Watch)
            .IncludeInDebugPackage("metrics.txt");
    }
}
