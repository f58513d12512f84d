using Diagnostics.Monitor;

var (options, problem) = MonitorOptions.Parse(args);
if (options is null)
{
    Console.Error.WriteLine(problem);
    Console.Error.WriteLine(MonitorOptions.Usage);
    return 2;
}
if (!Elevation.IsElevated())
{
    Console.Error.WriteLine(Elevation.Requirement());
    return 3;
}

var builder = Host.CreateApplicationBuilder();
// Under systemd (Type=notify) or the Windows service manager the host reports start and stop;
// run by hand, both are no-ops.
builder.Services.AddSystemd();
builder.Services.AddWindowsService(service => service.ServiceName = "Diagnostics.Monitor");
builder.Logging.AddSimpleConsole(console =>
{
    console.SingleLine = true;
    console.TimestampFormat = "dd MMM yyyy HH:mm:ss.fff ";
});
builder.Logging.AddFilter("Microsoft", LogLevel.Warning);
builder.Services.AddSingleton(options);
builder.Services.AddHostedService<MonitorService>();
using var host = builder.Build();
await host.RunAsync();
return Environment.ExitCode;
