using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Microsoft.AspNetCore.Http.Features;
using Diagnostics.Contracts;
using Diagnostics.Doctor;
using Diagnostics.Server.Api.Access;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Diagnostics.History;
using Diagnostics.Server.Diagnostics.Info;
using Diagnostics.Server.Diagnostics.Package;
using Diagnostics.Server.Diagnostics.Stacks;
using Diagnostics.Server.Diagnostics.Views;
using Diagnostics.Studio.Security;
using Diagnostics.Studio.Sources;
using Microsoft.AspNetCore.Mvc;

namespace Diagnostics.Server.Api;

/// <summary>
/// The JSON API: one GET endpoint per view of the server, each answering with a contract type.
/// Endpoints marked with IncludeInDebugPackage are what the debug package holds; the package
/// builder finds them by that mark.
/// </summary>
public static class HttpApi
{
    /// <summary>
    /// The most one monitor batch may hold: one second of a busy server with 10,000 clients sums to
    /// about 6 MB of JSON; anything larger is refused (413) before it is read.
    /// </summary>
    public const long MonitorBatchMaxBytes = 8 * 1024 * 1024;

    public static void MapServerApi(this WebApplication app, DataServer server)
    {
        // The monitor's push: its own token, nothing else, and a bounded body.
        app.MapPost(MonitorAnnouncement.IngestPath, (Func<HttpContext, Task<IResult>>)(context => IngestMonitorBatch(server, context)))
            .RequireCredential(HttpCredential.MonitorToken)
            .WithMetadata(new RequestSizeLimitAttribute(MonitorBatchMaxBytes));

        // Every endpoint needs watch; those that show more (clients, values, settings) or change something say what else.
        var api = app.MapGroup("/api").RequireCredential(HttpCredential.Operator).RequirePermission(StudioPermissions.Watch);

        api.MapGet("/info", (string[]? section) => Json(InfoView.Build(server, section ?? []), ContractsJson.Default.InfoReport))
            .IncludeInDebugPackage("info.json");
        api.MapGet("/info.txt", () => Results.Text(InfoBuilder.Build(server, ["everything"]), "text/plain; charset=utf-8"))
            .IncludeInDebugPackage("info.txt");
        api.MapGet("/history", (long? seconds, long? from, long? to) => History(server, seconds, from, to))
            .IncludeInDebugPackage("history.json", "seconds=3600");
        api.MapGet("/threads", () => Json(ThreadView.Build(server.Sampler.ThreadCpu), ContractsJson.Default.ThreadSnapshotArray))
            .IncludeInDebugPackage("threads.json");
        api.MapGet("/clients", () => Json(ClientView.Build(server), ContractsJson.Default.ClientSnapshotArray))
            .RequirePermission(StudioPermissions.Clients).IncludeInDebugPackage("clients.json");
        api.MapPost("/clients/{id:long}/kill", (long id) => KillClient(server, id)).RequirePermission(StudioPermissions.KillClients);
        api.MapGet("/clients/closed", () => Json(server.Clients.Closed.Recent(), ContractsJson.Default.ClosedClientArray))
            .RequirePermission(StudioPermissions.Clients).IncludeInDebugPackage("clients-closed.json");
        api.MapGet("/inflight", () => Json(InFlightView.Build(), ContractsJson.Default.InFlightWorkArray))
            .IncludeInDebugPackage("inflight.json");
        api.MapGet("/commands", () => Json(CommandView.Build(server), ContractsJson.Default.CommandStatisticsArray))
            .IncludeInDebugPackage("commands.json");
        // A script's source only when asked for (?source=true): it may embed secrets, so the debug package never holds it.
        api.MapGet("/scripts", (bool? source, HttpContext context) => Scripts(server, source == true, context))
            .IncludeInDebugPackage("scripts.json");
        api.MapGet("/latency", () => Json(LatencyView.Build(server), ContractsJson.Default.LatencyReport))
            .IncludeInDebugPackage("latency.json");
        api.MapGet("/slowlog", () => Json(SlowLogView.Build(server), ContractsJson.Default.SlowLogRecordArray))
            .RequirePermission(StudioPermissions.SlowLog).IncludeInDebugPackage("slowlog.json");
        // By command for every watcher; by client (addresses, names) only for a login that may see the clients.
        api.MapGet("/slowlog/summary", (HttpContext context) => Json(SlowLogView.Summary(server, includeClients: (SeenBy(context) & StudioPermissions.Clients) != 0), ContractsJson.Default.SlowLogSummary))
            .IncludeInDebugPackage("slowlog-summary.json");
        api.MapGet("/memory", () => Json(MemoryView.Build(server), ContractsJson.Default.MemoryReport))
            .IncludeInDebugPackage("memory.json");
        api.MapGet("/keyspace", () => Json(KeyspaceView.Build(server), ContractsJson.Default.KeyspaceReport))
            .RequirePermission(StudioPermissions.Keys).IncludeInDebugPackage("keyspace.json").LimitedAsExpensive();
        api.MapGet("/hotkeys", () => Json(HotKeysView.Build(server), ContractsJson.Default.HotKeysReport))
            .RequirePermission(StudioPermissions.Keys).IncludeInDebugPackage("hotkeys.json");
        api.MapGet("/diskio", () => Json(DiskIoView.Build(), ContractsJson.Default.DiskIoFiguresArray))
            .IncludeInDebugPackage("diskio.json");
        api.MapGet("/replication", () => Json(ReplicationView.Build(server), ContractsJson.Default.ReplicationSnapshot))
            .IncludeInDebugPackage("replication.json");
        api.MapGet("/runtime", () => Json(RuntimeView.Build(), ContractsJson.Default.RuntimeReport))
            .IncludeInDebugPackage("runtime.json");
        api.MapGet("/environment", () => Json(EnvironmentView.Build(), ContractsJson.Default.EnvironmentReport))
            .IncludeInDebugPackage("environment.json");
        api.MapGet("/config", () => Json(Redaction.Settings(server.Config), ContractsJson.Default.DictionaryStringString))
            .RequirePermission(StudioPermissions.Config).IncludeInDebugPackage("config.json");
        api.MapGet("/acl/log", () => Json(AclLogView.Build(server), ContractsJson.Default.AclLogRecordArray))
            .RequirePermission(StudioPermissions.AclLog).IncludeInDebugPackage("acl-log.json");
        api.MapGet("/log", () => Results.Text(string.Join('\n', server.Log.Lines()) + "\n", "text/plain; charset=utf-8"))
            .IncludeInDebugPackage("log.txt");
        // Over what the login may see: no finding names a key or a client the login's pages would not show.
        api.MapGet("/doctor", (HttpContext context) => Json(DoctorView.Examine(server, SeenBy(context)), ContractsJson.Default.DoctorReport))
            .IncludeInDebugPackage("doctor.json").LimitedAsExpensive();
        api.MapGet("/stacks", async (CancellationToken cancellationToken) => Results.Text(await ManagedStacks.CaptureAsync(cancellationToken), "text/plain; charset=utf-8"))
            .IncludeInDebugPackage("stacks.txt").LimitedAsExpensive();
        api.MapGet("/monitor", () => Json(server.Monitor.Report(), ContractsJson.Default.MonitorReport))
            .IncludeInDebugPackage("monitor.json");
        // A package holds what the login may see of the endpoints it includes: a part it may not is
        // left out and named in the manifest. The server's own packages hold every part, so serving
        // one needs every part's permissions.
        api.MapGet("/debug/package", (DebugPackageBuilder builder, HttpContext context) => DebugPackage(builder, context)).LimitedAsExpensive();
        api.MapPost("/debug/package", (PackageLibrary packages, HttpContext context, string? name) => OpenPackage(packages, context, name ?? "package.zip"));
        // The packages the server took by itself (Diagnostics/Triggers): listed, downloaded, opened in the studio.
        api.MapGet("/debug/packages", () => server.Triggers is { } triggers ? Json(triggers.Report(), ContractsJson.Default.TriggerReport) : NoTriggers())
            .IncludeInDebugPackage("triggers.json");
        api.MapGet("/debug/packages/{name}", (string name, HttpContext context) => SendTriggeredPackage(server, name, context)).ServesPackages();
        api.MapPost("/debug/packages/{name}/open", (string name, PackageLibrary packages, HttpContext context) => OpenTriggeredPackage(server, packages, name, context)).ServesPackages();
        api.MapGet("/endpoints", (EndpointDataSource endpoints) => Results.Text(EndpointList.Describe(endpoints), "text/plain; charset=utf-8"));
    }

    private static IResult Json<T>(T value, JsonTypeInfo<T> type) => Results.Json(value, type);

    /// <summary>The last <paramref name="seconds"/> (default 15 minutes), or the window [from, to] in unix ms.</summary>
    private static IResult History(DataServer server, long? seconds, long? from, long? to)
    {
        long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        long end = to ?? now;
        long start = from ?? end - (seconds ?? 900) * 1000;
        if (start > end)
            return Results.BadRequest("'from' is after 'to'");
        return Json(server.Sampler.History.Window(start, end), ContractsJson.Default.MetricHistory);
    }

    /// <summary>One second of the monitor's events; the gate has already checked its token.</summary>
    private static async Task<IResult> IngestMonitorBatch(DataServer server, HttpContext context)
    {
        MonitorBatch? batch;
        try
        {
            batch = await JsonSerializer.DeserializeAsync(context.Request.Body, ContractsJson.Default.MonitorBatch, context.RequestAborted);
        }
        catch (JsonException ex)
        {
            server.Monitor.Reject();
            return Results.BadRequest($"not a monitor batch: {ex.Message}");
        }
        if (batch is null || !server.Monitor.Ingest(batch))
            return Results.BadRequest($"this batch is not for this server (pid {Environment.ProcessId})");
        return Results.NoContent();
    }

    /// <summary>The scripts with their stats; their source only for a login allowed to see it (it may embed secrets).</summary>
    private static IResult Scripts(DataServer server, bool source, HttpContext context)
    {
        if (source && context.Features.Get<StudioGrant>() is { } grant && !grant.Has(StudioPermissions.ScriptSource))
            return Results.Text(grant.Refusal(StudioPermissions.ScriptSource, "see scripts' source") + "\n", "text/plain; charset=utf-8", statusCode: StatusCodes.Status403Forbidden);
        return Json(ScriptView.Build(server, source), ContractsJson.Default.ScriptReport);
    }

    private static IResult KillClient(DataServer server, long id)
    {
        if (server.Clients.Find(id) is not { } client)
            return Results.NotFound($"no client with id {id}");
        client.Kill();
        return Results.Ok();
    }

    /// <summary>
    /// Opens an uploaded package in the studio, as its Debug package page does: 201 with where to
    /// see it; 413 naming the limit it went over; 400 when it is not a package.
    /// </summary>
    private static async Task<IResult> OpenPackage(PackageLibrary packages, HttpContext context, string name)
    {
        // The package size limit bounds the body (counted as it is copied to disk), not Kestrel's 30 MB default.
        if (context.Features.Get<IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } bodySize)
            bodySize.MaxRequestBodySize = null;
        string fileName = Path.GetFileName(name);
        if (fileName.Length is 0 or > 128)
            return Results.BadRequest("'name' is a file name of 1 to 128 characters");
        return await Open(packages, context.Request.Body, fileName, context.Request.ContentLength, context.RequestAborted);
    }

    /// <summary>Opens a package in the studio: 201 with where to see it; 413 naming the limit it went over; 400 when it is not a package.</summary>
    private static async Task<IResult> Open(PackageLibrary packages, Stream body, string fileName, long? length, CancellationToken cancellationToken)
    {
        try
        {
            var package = await packages.OpenAsync(body, fileName, length, cancellationToken);
            var (count, bytes) = packages.Usage;
            string id = package.Description.PackageId!;
            var opened = new PackageOpened
            {
                Id = id,
                Path = $"/package/{id}",
                FileName = fileName,
                MemoryBytes = package.MemoryBytes,
                OpenPackages = count,
                OpenPackagesBytes = bytes,
                OpenPackagesLimitBytes = packages.Limits.MaxMemoryBytes,
            };
            return Results.Json(opened, ContractsJson.Default.PackageOpened, statusCode: StatusCodes.Status201Created);
        }
        catch (InvalidPackageException e)
        {
            int status = e.Limit is null ? StatusCodes.Status400BadRequest : StatusCodes.Status413PayloadTooLarge;
            return Results.Text(e.Message, "text/plain; charset=utf-8", statusCode: status);
        }
    }

    private const string NoSuchPackage = "no triggered package by that name is kept (GET /api/debug/packages lists them)";

    private static IResult NoTriggers() => Results.NotFound("package triggers are not running in this process");

    /// <summary>A kept triggered package by the name the list gives (never a path): 404 for any other name.</summary>
    private static async Task SendTriggeredPackage(DataServer server, string name, HttpContext context)
    {
        if (server.Triggers?.Folder.Find(name) is not { } file)
        {
            // The name is not echoed: a reply never reflects what a link put in the path.
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            context.Response.ContentType = "text/plain; charset=utf-8";
            await context.Response.WriteAsync(NoSuchPackage);
            return;
        }
        await SendZip(context, file.FullName, file.Name);
    }

    /// <summary>Opens a kept triggered package in the studio, as an upload of it would.</summary>
    private static async Task<IResult> OpenTriggeredPackage(DataServer server, PackageLibrary packages, string name, HttpContext context)
    {
        if (server.Triggers?.Folder.Find(name) is not { } file)
            return Results.Text(NoSuchPackage, "text/plain; charset=utf-8", statusCode: StatusCodes.Status404NotFound);
        using var stream = new FileStream(file.FullName, FileMode.Open, FileAccess.Read, FileShare.Read, bufferSize: 0);
        return await Open(packages, stream, file.Name, stream.Length, context.RequestAborted);
    }

    /// <summary>
    /// What the login behind this request may see: the gate's grant, which it sets on every request
    /// it admits, and the package builder sets on the requests it makes in-process for a login. An
    /// in-process request without one is a package that holds everything (a trigger's).
    /// </summary>
    private static StudioPermissions SeenBy(HttpContext context) =>
        context.Features.Get<StudioGrant>() is { } grant ? grant.Permissions
        : context.Features.Get<InProcessRequest>() is not null ? StudioPermissions.All
        : StudioPermissions.None;

    /// <summary>Builds the zip the login may have into a temp file, sends it with its length, and deletes it.</summary>
    private static async Task DebugPackage(DebugPackageBuilder builder, HttpContext context)
    {
        // The gate admitted the request as this grant; without one nothing would say what to leave out.
        var grant = context.Features.Get<StudioGrant>() ?? throw new InvalidOperationException("an operator route ran without the gate's grant");
        string path = await builder.BuildAsync(grant, context.RequestAborted);
        try
        {
            string name = $"diagnostics-{Environment.MachineName}-{DateTime.UtcNow:yyyyMMdd-HHmmss}.zip";
            await SendZip(context, path, name);
        }
        finally
        {
            File.Delete(path);
        }
    }

    /// <summary>
    /// Sends a zip file as a download. Read synchronously (SendFileAsync's async reads are thread
    /// pool work on Linux, and a package is fetched when the pool may be starved); the response
    /// writes go to the connection's pipe, on the diagnostics lane.
    /// </summary>
    internal static async Task SendZip(HttpContext context, string path, string downloadName)
    {
        using var file = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, bufferSize: 0);
        context.Response.ContentType = "application/zip";
        context.Response.Headers.ContentDisposition = $"attachment; filename=\"{downloadName}\"";
        context.Response.ContentLength = file.Length;
        var body = context.Response.BodyWriter;
        while (true)
        {
            int read = file.Read(body.GetSpan(64 * 1024));
            if (read == 0)
                break;
            body.Advance(read);
            var flushed = await body.FlushAsync(context.RequestAborted);
            if (flushed.IsCompleted)
                break;
        }
    }
}
