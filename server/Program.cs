using System.Net;
using System.Net.Sockets;
using Diagnostics.Server;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Network;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;

var config = new ServerConfig();
var problems = ConfigLoader.Load(args, config);
if (problems.Count > 0)
{
    Console.Error.WriteLine("*** FATAL CONFIG ERROR ***");
    foreach (var problem in problems)
        Console.Error.WriteLine(problem);
    return 1;
}

var builder = WebApplication.CreateSlimBuilder();
builder.Logging.ClearProviders();
builder.Logging.AddSimpleConsole(o =>
{
    o.SingleLine = true;
    o.TimestampFormat = "dd MMM yyyy HH:mm:ss.fff ";
});
builder.Logging.SetMinimumLevel(config.LogLevel switch
{
    "debug" => LogLevel.Debug,
    "verbose" => LogLevel.Information,
    "notice" => LogLevel.Information,
    "warning" => LogLevel.Warning,
    _ => LogLevel.None,
});
builder.Logging.AddFilter("Microsoft", LogLevel.Warning);

using var server = new DataServer(config);
builder.Services.AddSingleton(server);
builder.Services.Configure<SocketTransportOptions>(o => o.NoDelay = true);
builder.WebHost.ConfigureKestrel(kestrel =>
{
    kestrel.AddServerHeader = false;
    // The RESP handler enforces client-query-buffer-limit itself; a transport-level pause would
    // deadlock a large bulk that must be buffered whole before it can be parsed.
    kestrel.Limits.MaxRequestBufferSize = null;
    foreach (var endPoint in ListenAddresses.Resolve(config.Bind, config.Port))
        kestrel.Listen(endPoint, listen => listen.UseConnectionHandler<RespConnectionHandler>());
});

var app = builder.Build();
var log = app.Services.GetRequiredService<ILoggerFactory>().CreateLogger("Server");
server.ShutdownRequested.Token.Register(() => app.Lifetime.StopApplication());
app.Lifetime.ApplicationStarted.Register(() =>
    log.LogInformation("Server started, pid {Pid}, {Shards} shards ({Mode}), {Databases} databases. Ready to accept connections tcp on {Bind} port {Port}",
        Environment.ProcessId, config.Shards, config.Mode, config.Databases, string.Join(' ', config.Bind), config.Port));
await app.RunAsync();
log.LogInformation("Server is now ready to exit, bye bye...");
return 0;
