using Diagnostics.Server;
using Diagnostics.Server.Api;
using Diagnostics.Server.Commands;
using Diagnostics.Server.Api.Access;
using Diagnostics.Server.Api.Lane;
using Diagnostics.Server.Configuration;
using Diagnostics.Contracts;
using Diagnostics.Server.Diagnostics.History;
using Diagnostics.Server.Diagnostics.Monitor;
using Diagnostics.Server.Diagnostics.Package;
using Diagnostics.Server.Lifetime;
using Diagnostics.Server.Network;
using Diagnostics.Server.Persistence;
using Diagnostics.Server.Studio;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Https;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;

// First: from here on a SIGTERM or SIGINT at any moment is an orderly stop (exit 0), not a kill.
using var stopSignals = new StopSignals();
// Redis's first line, printed before the configuration (and so the log level) is known; here it
// also tells whoever started the process that a signal from now on is an orderly stop.
Console.Out.WriteLine($"{DateTime.Now:dd MMM yyyy HH:mm:ss.fff} warn: Server[0] oO0OoO0OoO0Oo Diagnostics.Server is starting oO0OoO0OoO0Oo (redis_version={ConnectionCommands.CompatibleVersion}, pid={Environment.ProcessId}, just started)");
Thread.CurrentThread.Name ??= "main"; // it loads the AOF: name it in INFO threads and diskio
var config = new ServerConfig();
var problems = ConfigLoader.Load(args, config);
if (ApiGate.Problem(config) is { } httpProblem)
    problems.Add(httpProblem);
if (problems.Count > 0)
{
    Console.Error.WriteLine("*** FATAL CONFIG ERROR ***");
    foreach (var problem in problems)
        Console.Error.WriteLine(problem);
    return 1;
}

// The C allocator under the tracked allocator, before anything allocates data; when the chosen
// one's library is absent, glibc serves and the log says why (once the log exists, below).
var allocator = Diagnostics.Server.Memory.AllocatorBackend.Open(config.Allocator, out string? allocatorProblem);
Diagnostics.Server.Memory.TrackedAllocator.Use(allocator);

// Run socket completions on the socket engine's own threads (io-threads of them) instead of
// queueing each one to the thread pool: one thread hand-off less per request, which measured
// about 1.5x the requests per second at pipeline depth 1 (README, Benchmarks). Safe because no
// RESP handler blocks. The runtime reads these once, when the first socket is created, so they
// are set before anything touches a socket.
Environment.SetEnvironmentVariable("DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS", "1");
Environment.SetEnvironmentVariable("DOTNET_SYSTEM_NET_SOCKETS_THREAD_COUNT", config.IoThreads.ToString(System.Globalization.CultureInfo.InvariantCulture));

using var server = new DataServer(config);
// Two threads: one can build a debug package while the other answers the API.
using var diagnosticsLane = new DiagnosticsLane(threadCount: 2);
var host = BuildHost();
var log = host.Services.GetRequiredService<ILoggerFactory>().CreateLogger("Server");
using var triggers = new Diagnostics.Server.Diagnostics.Triggers.PackageTriggers(server, host.Services.GetRequiredService<DebugPackageBuilder>(),
    host.Services.GetRequiredService<ILoggerFactory>().CreateLogger("Triggers"));
server.Triggers = triggers;
var lifetime = host.Services.GetRequiredService<IHostApplicationLifetime>();
// A signal is a SHUTDOWN (without SAVE), as in Redis.
stopSignals.Requested.Register(() =>
{
    log.LogWarning("Received {Signal} scheduling shutdown...", stopSignals.Received);
    server.ShutdownRequested.Cancel();
});
if (allocatorProblem is not null)
    log.LogWarning("{Problem}", allocatorProblem);
log.LogInformation("Tracked memory is served by {Allocator}", allocator.Name);
server.Aof.Log = host.Services.GetRequiredService<ILoggerFactory>().CreateLogger("Persistence");
server.Rdb.Log = server.Aof.Log;
server.Scripts.Log = host.Services.GetRequiredService<ILoggerFactory>().CreateLogger("Scripting");
server.Replication.Log = host.Services.GetRequiredService<ILoggerFactory>().CreateLogger("Replication");
server.Tls.Log = host.Services.GetRequiredService<ILoggerFactory>().CreateLogger("Tls");
if (config.Tls.InUse)
{
    if (config.Tls.Port != 0 && config.Transport == "kestrel")
    {
        log.LogCritical("tls-port needs the sockets transport (transport sockets, the default): the kestrel transport has no TLS listener here.");
        return 1;
    }
    // Redis's words when it cannot start with its TLS settings; the reason is logged just before.
    if (server.Tls.Configure("start") is not null)
    {
        log.LogCritical("Failed to configure TLS. Check logs for more info.");
        return 1;
    }
}
// ACL users declared at start: "user" lines or an aclfile, never both (Redis's rule and words).
if (config.AclFile.Length > 0 && config.UserLines.Count > 0)
{
    log.LogCritical("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.");
    return 1;
}
foreach (var line in config.UserLines)
{
    if (line.Length == 0 || server.Acl.Declare(line[0], line[1..]) is not { } userProblem)
        continue;
    log.LogCritical("Error in user declaration '{User}': {Problem}", line[0], userProblem);
    return 1;
}
if (config.AclFile.Length > 0 && server.Acl.LoadFile(config.AclFilePath).Error is { } aclProblem)
{
    log.LogCritical("Aborting Redis startup because of ACL errors: {Problem}", aclProblem);
    return 1;
}
server.HttpTls.Log = server.Tls.Log;
if (config.HttpTlsPort != 0 && server.HttpTls.Configure("start") is not null)
{
    log.LogCritical("Failed to configure TLS for the HTTPS listener (http-tls-port). Check logs for more info.");
    return 1;
}
try
{
    // Before any listener opens: clients connect to a server whose data is all there.
    server.Aof.Start();
}
catch (Exception ex) when (ex is AofFormatException or DiskFileException or RdbFormatException)
{
    log.LogCritical("Can't load the append only file: {Error}", ex.Message);
    return 1;
}
try
{
    // As Redis: with the AOF off, the last snapshot is the data.
    if (!config.AppendOnly)
        server.Rdb.LoadAtStart();
}
catch (Exception ex) when (ex is AofFormatException or DiskFileException or RdbFormatException)
{
    log.LogCritical("Fatal error loading the DB ({File}): {Error}. Exiting.", server.Rdb.FilePath, ex.Message);
    return 1;
}
server.Rdb.StartSchedule();
// A stop requested while the AOF loaded: nothing was served, so the host never starts.
bool serve = !server.ShutdownRequested.IsCancellationRequested;
server.Sampler.Start();
lifetime.ApplicationStarted.Register(() =>
{
    if (config.HttpPort != 0)
        log.LogInformation("HTTP API on http://{Bind}:{Port}/api ({Access})", string.Join(' ', config.HttpBind), config.HttpPort,
            host.Services.GetRequiredService<HttpLogins>().LoginRequired ? "login required: an ACL user or the API key" : "loopback only, no login");
    if (config.HttpTlsPort != 0)
        log.LogInformation("HTTPS API on https://{Bind}:{Port}/api", string.Join(' ', config.HttpBind), config.HttpTlsPort);
    server.Announcement = MonitorAnnouncementFile.Write(config.Port, IngestUrl(), config.Dir);
    if (server.Announcement.Problem is { } announceProblem)
        log.LogWarning("No monitor can attach: {Problem}", announceProblem);
    else
        log.LogInformation("Monitor announcement in {Path}", server.Announcement.Path);
    WritePidFile();
    log.LogInformation("Server started, pid {Pid}, {Shards} shards ({Mode}), {Databases} databases, {Transport} transport. Ready to accept connections tcp on {Bind} port {Port}",
        Environment.ProcessId, config.Shards, config.Mode, config.Databases, config.Transport, string.Join(' ', config.Bind), config.Port);
    if (config.Tls.Port != 0)
        log.LogInformation("Ready to accept connections tls on {Bind} port {Port}", string.Join(' ', config.Bind), config.Tls.Port);
    // Only now may a stop (SHUTDOWN, a signal) stop the host: stopping it while it started
    // cancelled the listeners' start half-way, and the host's start then failed with that.
    server.ShutdownRequested.Token.Register(lifetime.StopApplication);
    // replicaof: the link starts once we listen, as its handshake gives the master our port.
    server.Replication.Start();
    // A signal while a script runs past busy-reply-threshold: the script is stopped, as SHUTDOWN
    // NOSAVE stops it (its writes never reach the AOF), or the host would wait for it forever.
    lifetime.ApplicationStopping.Register(server.Scripts.AbortForShutdown);
});
try
{
    if (serve)
        await host.RunAsync();
    else
        log.LogWarning("Shutdown requested while loading: exiting without serving.");
}
catch (IOException ex) when (ex.InnerException is System.Net.Sockets.SocketException or Microsoft.AspNetCore.Connections.AddressInUseException)
{
    // A port taken by another process: one clear line and a failing exit code, as Redis.
    log.LogCritical("{Error} Failed listening (tcp port {Port}, http port {HttpPort}), aborting.", ex.Message, config.Port, config.HttpPort);
    return 1;
}
int exitCode = 0;
// A signal stops the host without SHUTDOWN's own save: the snapshot is taken now, with no client
// left to change the data, when the save schedule is on (Redis's prepareForShutdown).
if (!server.ShutdownSaveDone && !config.SaveSchedule.IsEmpty)
{
    log.LogInformation("Saving the final RDB snapshot before exiting.");
    if (server.Rdb.Save() is not null)
    {
        log.LogWarning("Error trying to save the DB before exiting: {Error}", server.Rdb.LastError);
        exitCode = 1;
    }
}
if (server.Aof.Enabled)
{
    log.LogInformation("Calling fsync() on the AOF file.");
    server.Aof.Stop(TimeSpan.FromSeconds(30));
}
if (config.PidFile.Length > 0)
    File.Delete(config.PidFile);
log.LogInformation("Server is now ready to exit, bye bye...");
return exitCode;

// One web host for both listeners: Kestrel serves HTTP (API, metrics, debug package) and, with
// --transport kestrel, RESP too; by default RESP runs on the lean socket listener beside it.
WebApplication BuildHost()
{
    // The empty builder: no appsettings.json, environment or command-line configuration sources
    // (settings come from redis.conf and --options only), and no file watcher thread for them.
    var builder = WebApplication.CreateEmptyBuilder(new WebApplicationOptions { ApplicationName = "Diagnostics.Server" });
    ConfigureCommon(builder.Services, builder.Logging);
    // Signals are ours (StopSignals), not ConsoleLifetime's.
    builder.Services.AddSingleton<IHostLifetime>(stopSignals);
    builder.WebHost.UseKestrelCore();
    // Serve the studio's static files from where the build left them (the runtime manifest beside
    // the binaries); a published server has them in its wwwroot and no manifest, and this is a no-op.
    builder.WebHost.UseStaticWebAssets();
    builder.Services.AddRouting();
    builder.Services.AddExpensiveEndpointLimit();
    builder.Services.AddSingleton(new DebugPackageBuilder(server, server.DebugPackage));
    builder.Services.AddPrometheusMetrics();
    builder.Services.AddStudio(server);
    builder.WebHost.ConfigureKestrel(kestrel =>
    {
        kestrel.AddServerHeader = false;
        if (config.HttpPort != 0)
            foreach (var endPoint in ListenAddresses.Resolve(config.HttpBind, config.HttpPort))
                kestrel.Listen(endPoint);
        // HTTPS: each handshake takes the options in use now, so a reloaded certificate serves the next connection.
        if (config.HttpTlsPort != 0)
            foreach (var endPoint in ListenAddresses.Resolve(config.HttpBind, config.HttpTlsPort))
                kestrel.Listen(endPoint, listen => listen.UseHttps(new TlsHandshakeCallbackOptions
                {
                    OnConnection = _ => ValueTask.FromResult(server.HttpTls.Current!.ServerOptions),
                }));
        if (config.Transport != "kestrel")
            return;
        // The RESP handler enforces client-query-buffer-limit itself; a transport-level pause would
        // deadlock a large bulk that must be buffered whole before it can be parsed.
        kestrel.Limits.MaxRequestBufferSize = null;
        foreach (var endPoint in ListenAddresses.Resolve(config.Bind, config.Port))
            kestrel.Listen(endPoint, listen => listen.UseConnectionHandler<RespConnectionHandler>());
    });
    // The HTTP listeners run on the diagnostics lane's own threads (registered last, so Kestrel
    // asks it first; it binds only the HTTP port).
    builder.Services.AddSingleton(diagnosticsLane);
    builder.Services.AddSingleton<IConnectionListenerFactory>(new LaneListenerFactory(diagnosticsLane, config.HttpPort, config.HttpTlsPort));
    if (config.Transport == "kestrel")
        builder.Services.Configure<SocketTransportOptions>(o => o.NoDelay = true);
    else
        builder.Services.AddHostedService<SocketListener>();

    var app = builder.Build();
    // Routing first: the gate decides on the routed endpoint's declared credential, not on the path.
    // The studio's session cookie is read next: the gate accepts it in place of the API key.
    app.UseRouting();
    app.UseAuthentication();
    app.UseMiddleware<ApiGate>(config);
    // After the gate: a request without credentials is refused before it takes a place.
    app.UseRateLimiter();
    app.MapServerApi(server);
    app.MapPrometheusScrape();
    app.RegisterDebugEndpoints(server.DebugPackage);
    app.MapStudio();
    return app;
}

// Where the monitor pushes: the HTTP listener's first address, a wildcard read as loopback.
string? IngestUrl()
{
    if (config.HttpPort == 0)
        return null;
    string host = config.HttpBind[0].TrimStart('-') switch
    {
        "0.0.0.0" or "*" => "127.0.0.1",
        "::" => "[::1]",
        var address when address.Contains(':') => $"[{address}]",
        var address => address,
    };
    return $"http://{host}:{config.HttpPort}{MonitorAnnouncement.IngestPath}";
}

// Redis's pidfile: the pid and a newline, written once the server is up, removed at exit.
void WritePidFile()
{
    if (config.PidFile.Length == 0)
        return;
    try
    {
        File.WriteAllText(config.PidFile, Environment.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture) + "\n");
    }
    catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
    {
        log.LogWarning("Failed to write PID file: {Error}", ex.Message);
    }
}

void ConfigureCommon(IServiceCollection services, ILoggingBuilder logging)
{
    logging.ClearProviders();
    logging.AddSimpleConsole(o =>
    {
        o.SingleLine = true;
        o.TimestampFormat = "dd MMM yyyy HH:mm:ss.fff ";
    });
    logging.SetMinimumLevel(config.LogLevel switch
    {
        "debug" => LogLevel.Debug,
        "verbose" or "notice" => LogLevel.Information,
        "warning" => LogLevel.Warning,
        _ => LogLevel.None,
    });
    logging.AddFilter("Microsoft", LogLevel.Warning);
    logging.AddProvider(server.Log);
    services.AddSingleton(server);
    services.AddSingleton<ClientSessions>();
    services.AddHostedService<ClientsCron>();
    services.AddHostedService<Diagnostics.Server.Tls.TlsCertificateWatcher>();
}
