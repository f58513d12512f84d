using System.Diagnostics;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// Real traffic for as long as a test looks at the server: Debian's redis-benchmark looping
/// (-l) over the given tests, or one given command, until disposed, when it is killed.
/// </summary>
public sealed class BackgroundLoad : IDisposable
{
    private readonly Process _process;

    public BackgroundLoad(int port, int clients = 8, string tests = "set,get", int pipeline = 1)
        : this(["-p", port.ToString(), "-c", clients.ToString(), "-t", tests, "-P", pipeline.ToString(), "-r", "10000", "-n", "100000", "-l", "-q"])
    {
    }

    private BackgroundLoad(string[] arguments)
    {
        string path = ExternalTool.Require("redis-benchmark", "redis-tools");
        var info = new ProcessStartInfo(path)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in arguments)
            info.ArgumentList.Add(argument);
        _process = Process.Start(info)!;
        // Drained so a full pipe never stalls it.
        _process.OutputDataReceived += (_, _) => { };
        _process.ErrorDataReceived += (_, _) => { };
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

    /// <summary>Loops one command (its words as redis-benchmark takes them) from <paramref name="clients"/> connections.</summary>
    public static BackgroundLoad Command(int port, int clients, params string[] command)
        => new(["-p", port.ToString(), "-c", clients.ToString(), "-n", "100000", "-l", "-q", .. command]);

    public void Dispose()
    {
        try
        {
            if (!_process.HasExited)
                _process.Kill(entireProcessTree: true);
            _process.WaitForExit(5000);
        }
        finally
        {
            _process.Dispose();
        }
    }
}
