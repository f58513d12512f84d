using System.Globalization;

namespace Diagnostics.Monitor;

/// <summary>The command line: which server to attach to, and how.</summary>
public sealed record MonitorOptions
{
    public int? Pid { get; init; }
    public string? PidFile { get; init; }
    public int? Port { get; init; }
    /// <summary>An announcement file named outright, instead of looking where the server writes it.</summary>
    public string? AnnouncementFile { get; init; }
    public TimeSpan Interval { get; init; } = TimeSpan.FromSeconds(1);
    /// <summary>How long a server found by port or pid file may be gone before the monitor gives up and exits.</summary>
    public TimeSpan GiveUpAfter { get; init; } = TimeSpan.FromSeconds(60);
    public int BufferKilobytesPerCpu { get; init; } = 8192;
    public bool Runtime { get; init; } = true;
    public bool Block { get; init; } = true;

    public const string Usage = """
        Usage: Diagnostics.Monitor (--pid N | --pid-file PATH | --port N) [options]
        Attaches to one Diagnostics.Server process and pushes the kernel's record of its I/O and its
        runtime's events to the server's HTTP listener, once a second. Must run as root (Linux) or
        Administrator (Windows).
          --pid N              the server's process id (the monitor exits when it exits)
          --pid-file PATH      the server's pidfile (follows restarts)
          --port N             the server's RESP port (follows restarts)
          --announcement PATH  the server's announcement file, if not in its usual place
          --interval-ms N      how often to push (default 1000)
          --give-up-after S    seconds a followed server may be gone before exiting (default 60)
          --buffer-kb N        kernel ring buffer per CPU (default 8192)
          --no-runtime         no EventPipe session
          --no-block           no block-layer events
        """;

    /// <summary>Parses the arguments, or returns why they cannot be used.</summary>
    public static (MonitorOptions? Options, string? Problem) Parse(string[] args)
    {
        var options = new MonitorOptions();
        for (int i = 0; i < args.Length; i++)
        {
            string name = args[i];
            string Value() => i + 1 < args.Length ? args[++i] : throw new ArgumentException($"{name} needs a value");
            int Number() => int.TryParse(Value(), NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n > 0 ? n : throw new ArgumentException($"{name} needs a positive number");
            try
            {
                options = name switch
                {
                    "--pid" => options with { Pid = Number() },
                    "--pid-file" => options with { PidFile = Value() },
                    "--port" => options with { Port = Number() },
                    "--announcement" => options with { AnnouncementFile = Value() },
                    "--interval-ms" => options with { Interval = TimeSpan.FromMilliseconds(Number()) },
                    "--give-up-after" => options with { GiveUpAfter = TimeSpan.FromSeconds(Number()) },
                    "--buffer-kb" => options with { BufferKilobytesPerCpu = Number() },
                    "--no-runtime" => options with { Runtime = false },
                    "--no-block" => options with { Block = false },
                    _ => throw new ArgumentException($"unknown option '{name}'"),
                };
            }
            catch (ArgumentException ex)
            {
                return (null, ex.Message);
            }
        }
        if (options.Pid is null && options.PidFile is null && options.Port is null)
            return (null, "say which server: --pid, --pid-file or --port");
        return (options, null);
    }
}
