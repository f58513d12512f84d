using System.Diagnostics;
using System.Text;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// A program run in a pseudo-terminal through util-linux's script(1), so it behaves as it does for
/// a person at a keyboard (redis-cli only loads COMMAND DOCS for its help when stdin is a tty).
/// TERM=dumb keeps the line editor in plain line mode: no cursor queries, readable output.
/// </summary>
public sealed class TerminalSession : IDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _output = new();
    private readonly Task _reader;

    public TerminalSession(string commandLine)
    {
        string script = ExternalTool.Require("script", "bsdutils");
        var info = new ProcessStartInfo(script)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var argument in new[] { "-q", "-f", "-e", "-c", commandLine, "/dev/null" })
            info.ArgumentList.Add(argument);
        info.Environment["TERM"] = "dumb";
        _process = Process.Start(info)!;
        _reader = Task.Run(ReadOutput);
    }

    /// <summary>Everything the terminal showed so far.</summary>
    public string Output
    {
        get
        {
            lock (_output)
                return _output.ToString();
        }
    }

    public bool HasExited => _process.HasExited;
    public int ExitCode => _process.ExitCode;

    /// <summary>Types a line as a user would.</summary>
    public void TypeLine(string line)
    {
        _process.StandardInput.Write(line + "\n");
        _process.StandardInput.Flush();
    }

    /// <summary>Waits until the screen shows <paramref name="text"/> at least <paramref name="occurrences"/> times.</summary>
    public void WaitFor(string text, int occurrences = 1, int timeoutMs = 20_000)
    {
        var deadline = DateTime.UtcNow.AddMilliseconds(timeoutMs);
        while (CountOf(Output, text) < occurrences)
        {
            if (DateTime.UtcNow > deadline || _process.HasExited)
            {
                // Let the reader drain what the process printed before it ended.
                _reader.Wait(1000);
                if (CountOf(Output, text) >= occurrences)
                    return;
                Assert.Fail($"terminal did not show \"{text}\" x{occurrences} (exited: {_process.HasExited}{(_process.HasExited ? $", code {_process.ExitCode}" : "")}). Screen:\n{Output}");
            }
            Thread.Sleep(20);
        }
    }

    public bool WaitForExit(int timeoutMs)
    {
        bool exited = _process.WaitForExit(timeoutMs);
        if (exited)
            _reader.Wait(5000);
        return exited;
    }

    private static int CountOf(string text, string value)
    {
        int count = 0;
        for (int i = text.IndexOf(value, StringComparison.Ordinal); i >= 0; i = text.IndexOf(value, i + value.Length, StringComparison.Ordinal))
            count++;
        return count;
    }

    private async Task ReadOutput()
    {
        var buffer = new char[4096];
        var stdout = _process.StandardOutput;
        int n;
        while ((n = await stdout.ReadAsync(buffer)) > 0)
        {
            lock (_output)
                _output.Append(buffer, 0, n);
        }
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            _process.WaitForExit(5000);
        }
        _process.Dispose();
    }
}
