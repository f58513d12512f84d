using System.Diagnostics;
using System.Text;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// A real peer's process (redis-server, redis-sentinel) run as the test's child: its stdout and
/// stderr kept (read asynchronously, so a line may arrive after the event it reports) for
/// failure messages, and killed exactly once, however often a test stops it.
/// </summary>
public sealed class CapturedProcess : IDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _output = new();
    private readonly bool _killTree;
    private bool _killed;

    private CapturedProcess(Process process, bool killTree)
    {
        _process = process;
        _killTree = killTree;
    }

    /// <param name="killTree">Kill its children too (redis-server's BGSAVE and rewrite forks).</param>
    public static CapturedProcess Start(string path, string workingDirectory, IEnumerable<string> arguments, bool killTree)
    {
        var info = new ProcessStartInfo(path)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = workingDirectory,
        };
        foreach (string argument in arguments)
            info.ArgumentList.Add(argument);
        var captured = new CapturedProcess(Process.Start(info)!, killTree);
        captured._process.OutputDataReceived += (_, e) => captured.Append(e.Data);
        captured._process.ErrorDataReceived += (_, e) => captured.Append(e.Data);
        captured._process.BeginOutputReadLine();
        captured._process.BeginErrorReadLine();
        return captured;
    }

    public string Output
    {
        get
        {
            lock (_output)
                return _output.ToString();
        }
    }

    public bool WaitForExit(int milliseconds) => _process.WaitForExit(milliseconds);

    /// <summary>Polls <paramref name="ready"/> for up to 30 s; false as soon as the process has exited.</summary>
    public bool WaitUntil(Func<bool> ready)
    {
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (DateTime.UtcNow < deadline)
        {
            if (_process.HasExited)
                return false;
            if (ready())
                return true;
            Thread.Sleep(20);
        }
        return false;
    }

    private void Append(string? line)
    {
        if (line is null)
            return;
        lock (_output)
            _output.AppendLine(line);
    }

    public void Dispose()
    {
        if (_killed)
            return;
        _killed = true;
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: _killTree);
            _process.WaitForExit(10_000);
        }
        _process.Dispose();
    }

    /// <summary>Removes a peer's temporary directory; one a dying fork still writes into is left (a stray temp dir is harmless).</summary>
    public static void TryDeleteDirectory(string directory)
    {
        try
        {
            Directory.Delete(directory, recursive: true);
        }
        catch (IOException)
        {
        }
    }
}
