using System.Diagnostics;
using System.Text;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// The real monitor, started as its own process exactly as an operator runs it
/// (dotnet Diagnostics.Monitor.dll --pid N), optionally as another user through setpriv.
/// Its output is kept for assertions and failure messages.
/// </summary>
public sealed class MonitorProcess : IDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _output = new();

    private MonitorProcess(Process process) => _process = process;

    public int Pid => _process.Id;
    public bool HasExited => _process.HasExited;
    public int ExitCode => _process.ExitCode;

    public string Output
    {
        get
        {
            lock (_output)
                return _output.ToString();
        }
    }

    /// <summary>Starts the monitor with <paramref name="arguments"/>; as root unless <paramref name="asUser"/> (a uid) is given.</summary>
    public static MonitorProcess Start(string[] arguments, int? asUser = null)
    {
        RequireRoot();
        var info = new ProcessStartInfo(asUser is null ? "dotnet" : ExternalTool.Require("setpriv", "util-linux"))
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        if (asUser is int uid)
        {
            foreach (string a in (string[])[$"--reuid={uid}", $"--regid={uid}", "--clear-groups", "--", "dotnet"])
                info.ArgumentList.Add(a);
            // The unprivileged user has no home: keep dotnet from trying to make one.
            info.Environment["DOTNET_CLI_HOME"] = "/tmp";
            info.Environment["HOME"] = "/tmp";
        }
        info.ArgumentList.Add(MonitorAssembly());
        foreach (string a in arguments)
            info.ArgumentList.Add(a);
        var process = Process.Start(info) ?? throw new InvalidOperationException("could not start the monitor");
        var monitor = new MonitorProcess(process);
        process.OutputDataReceived += (_, e) => monitor.Append(e.Data);
        process.ErrorDataReceived += (_, e) => monitor.Append(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return monitor;
    }

    /// <summary>
    /// The monitor as built in its own project folder (monitor/bin/CONFIG/net10.0): a copy in the
    /// test output would run against the test's dependency list, which takes the hosting
    /// libraries from ASP.NET's shared framework, which the monitor does not use.
    /// </summary>
    private static string MonitorAssembly()
    {
        var output = new DirectoryInfo(AppContext.BaseDirectory.TrimEnd(Path.DirectorySeparatorChar));
        string framework = output.Name, configuration = output.Parent!.Name;
        var repository = output.Parent.Parent!.Parent!.Parent!.Parent!.FullName;
        string path = Path.Combine(repository, "monitor", "bin", configuration, framework, "Diagnostics.Monitor.dll");
        Assert.True(File.Exists(path), $"the monitor is not built at {path}: dotnet build Diagnostics.sln");
        return path;
    }

    /// <summary>The kernel tests read tracepoints: they need root, and say so instead of skipping.</summary>
    public static void RequireRoot()
    {
        if (Environment.UserName != "root" && !File.ReadAllText("/proc/self/status").Contains("Uid:\t0\t", StringComparison.Ordinal))
            Assert.Fail("the monitor tests read the kernel's tracepoints and must run as root (CI runs as root; locally: sudo dotnet test)");
    }

    private void Append(string? line)
    {
        if (line is null)
            return;
        lock (_output)
            _output.AppendLine(line);
    }

    /// <summary>Waits for the exit and, once it came, for the last output lines to be read.</summary>
    public bool WaitForExit(TimeSpan timeout)
    {
        if (!_process.WaitForExit(timeout))
            return false;
        _process.WaitForExit();
        return true;
    }

    /// <summary>SIGTERM, as systemd stops it; waits for a clean exit.</summary>
    public void Stop()
    {
        if (_process.HasExited)
            return;
        ExternalTool.Run("kill", "procps", ["-TERM", _process.Id.ToString()]);
        if (!_process.WaitForExit(TimeSpan.FromSeconds(15)))
            Assert.Fail("the monitor did not exit within 15 s of SIGTERM:\n" + Output);
        _process.WaitForExit();
    }

    /// <summary>SIGKILL: no chance to clean up.</summary>
    public void KillHard()
    {
        _process.Kill();
        _process.WaitForExit();
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            _process.Kill();
            _process.WaitForExit();
        }
        _process.Dispose();
    }
}
