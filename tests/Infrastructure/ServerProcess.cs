using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// The real server, started as its own process on a free loopback port, exactly as a user runs
/// it (dotnet Diagnostics.Server.dll --port N ...). Output is captured for assertions and for
/// the failure message when it does not come up.
/// </summary>
public sealed class ServerProcess : IDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _output = new();

    private ServerProcess(Process process, int port)
    {
        _process = process;
        Port = port;
    }

    public int Port { get; }
    /// <summary>The HTTP listener's port (API, metrics, debug package); 0 when started with --http-port 0.</summary>
    public int HttpPort { get; private init; }
    // A log level above notice hides the ready line; then a connect is the only sign.
    private bool _quiet;
    /// <summary>The working directory made for this server when the test gave it none (deleted on Dispose).</summary>
    private string? _privateDirectory;
    public int Pid => _process.Id;
    public bool HasExited => _process.HasExited;

    public string Output
    {
        get
        {
            lock (_output)
                return _output.ToString();
        }
    }

    /// <summary>
    /// Waits for <paramref name="text"/> in the server's log. The log is read from its stdout
    /// asynchronously, so a line the server wrote before an event the test saw may arrive after it.
    /// </summary>
    public void WaitForOutput(string text, int timeoutMs = 5_000) =>
        Poll.Until(() => Output.Contains(text, StringComparison.Ordinal), () => $"'{text}' in the server's log:\n{Output}", timeoutMs);

    /// <summary>Starts a server with the given extra arguments (redis-server style "--name value").</summary>
    public static ServerProcess Start(params string[] arguments) => StartWith(null, arguments);

    /// <summary>
    /// Starts a server with extra environment variables (the runtime's DOTNET_* knobs, as an
    /// operator sets them in a service unit) and the given arguments.
    /// </summary>
    public static ServerProcess StartWithEnvironment(IReadOnlyDictionary<string, string> environment, params string[] arguments)
        => StartWith(null, arguments, environment);

    /// <summary>Starts a server from a config file (first argument, as redis-server takes it) plus options.</summary>
    public static ServerProcess StartWith(string? configFile, params string[] arguments) => StartWith(configFile, arguments, null);

    private static ServerProcess StartWith(string? configFile, string[] arguments, IReadOnlyDictionary<string, string>? environment)
    {
        // A port found free can be taken (by another test's outgoing connection, say) before the
        // server binds it: when the ports were ours to choose, choose again.
        bool portsChosenHere = Array.IndexOf(arguments, "--port") < 0 && Array.IndexOf(arguments, "--http-port") < 0;
        for (int attempt = 1; ; attempt++)
        {
            try
            {
                return StartOnce(configFile, arguments, environment);
            }
            catch (InvalidOperationException ex) when (portsChosenHere && attempt < 3 && ex.Message.Contains("address already in use", StringComparison.OrdinalIgnoreCase))
            {
            }
        }
    }

    /// <summary>
    /// Starts a server and returns at once, without waiting for it to listen: for stopping it
    /// while it is still starting (loading its AOF, binding its ports).
    /// </summary>
    public static ServerProcess Launch(params string[] arguments) => StartOnce(null, arguments, null, waitUntilListening: false);

    private static ServerProcess StartOnce(string? configFile, string[] arguments, IReadOnlyDictionary<string, string>? environment, bool waitUntilListening = true)
    {
        int port = FreePort();
        var info = ServerStartInfo();
        if (environment is not null)
            foreach (var (name, value) in environment)
                info.Environment[name] = value;
        if (configFile is not null)
            info.ArgumentList.Add(configFile);
        bool hasPort = false;
        foreach (var a in arguments)
            hasPort |= a == "--port";
        if (!hasPort)
        {
            info.ArgumentList.Add("--port");
            info.ArgumentList.Add(port.ToString());
        }
        // Every server gets its own HTTP port too: the default 8080 would collide between tests.
        int httpPort = Array.IndexOf(arguments, "--http-port") is >= 0 and int at ? int.Parse(arguments[at + 1]) : FreePort();
        if (Array.IndexOf(arguments, "--http-port") < 0)
        {
            info.ArgumentList.Add("--http-port");
            info.ArgumentList.Add(httpPort.ToString());
        }
        AddNoSnapshots(info, configFile, arguments);
        string? privateDirectory = AddPrivateDirectory(info, configFile, arguments);
        foreach (var a in arguments)
            info.ArgumentList.Add(a);
        if (hasPort)
            port = int.Parse(arguments[Array.IndexOf(arguments, "--port") + 1]);

        var process = Process.Start(info)!;
        var server = new ServerProcess(process, port) { HttpPort = httpPort, _quiet = Array.IndexOf(arguments, "--loglevel") >= 0, _privateDirectory = privateDirectory };
        process.OutputDataReceived += (_, e) => server.Append(e.Data);
        process.ErrorDataReceived += (_, e) => server.Append(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        if (!waitUntilListening)
            return server;
        try
        {
            server.WaitUntilListening();
        }
        catch
        {
            server.Dispose();
            throw;
        }
        return server;
    }

    private void Append(string? line)
    {
        if (line is null)
            return;
        lock (_output)
            _output.AppendLine(line);
    }

    private void WaitUntilListening()
    {
        // The server's own "Ready to accept connections" line proves that this process holds the
        // port; a bare connect could reach another server that took the same free port first.
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (DateTime.UtcNow < deadline)
        {
            if (_process.HasExited)
            {
                // The untimed wait also waits for the output readers, so the log (and a port
                // clash in it, which the caller retries) is complete.
                _process.WaitForExit();
                throw new InvalidOperationException($"server exited with code {_process.ExitCode} before listening:\n{Output}");
            }
            // Quiet, the HTTP listener must answer too: RESP can open before it.
            if (Output.Contains("Ready to accept connections", StringComparison.Ordinal)
                || (_quiet && CanConnect(Port) && (HttpPort == 0 || CanConnect(HttpPort))))
                return;
            Thread.Sleep(25);
        }
        throw new TimeoutException($"server did not listen on port {Port} within 30 s:\n{Output}");
    }

    /// <summary>True once the RESP port takes connections (each call opens and closes one).</summary>
    public bool AcceptsConnections => CanConnect(Port);

    private static bool CanConnect(int port)
    {
        try
        {
            using var socket = new TcpClient();
            socket.Connect(IPAddress.Loopback, port);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    public RespClient Connect() => new(Port);

    /// <summary>Waits for the process to exit on its own (after SHUTDOWN, say).</summary>
    public bool WaitForExit(TimeSpan timeout) => WaitForExitAndOutput(timeout);

    /// <summary>
    /// The timed WaitForExit can return before the output handlers have seen the last lines (the
    /// documented caveat); the untimed one, called once the process is gone, waits for them, so
    /// <see cref="Output"/> holds everything the server printed before exiting.
    /// </summary>
    private bool WaitForExitAndOutput(TimeSpan timeout)
    {
        if (!_process.WaitForExit(timeout))
            return false;
        _process.WaitForExit();
        return true;
    }

    public int ExitCode => _process.ExitCode;

    /// <summary>"dotnet Diagnostics.Server.dll" with its output captured; arguments are added by the caller.</summary>
    private static ProcessStartInfo ServerStartInfo()
    {
        var info = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        info.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "Diagnostics.Server.dll"));
        return info;
    }

    public static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    /// <summary>SIGKILL: the process dies at once, with no chance to flush anything (a crash).</summary>
    public void KillHard()
    {
        if (!_process.HasExited)
            _process.Kill();
        WaitForExitAndOutput(TimeSpan.FromSeconds(10));
    }

    /// <summary>SIGTERM, as a service manager stops the server; waits for the exit.</summary>
    public bool Terminate(TimeSpan timeout)
    {
        if (OperatingSystem.IsWindows())
            throw new PlatformNotSupportedException("SIGTERM is a Unix signal");
        if (!_process.HasExited && SendSignal(_process.Id, 15) != 0)
            throw new InvalidOperationException($"kill(SIGTERM) failed for pid {_process.Id}");
        return WaitForExitAndOutput(timeout);
    }

    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static extern int SendSignal(int pid, int signal);

    /// <summary>
    /// Starts a server that is expected to refuse to start (a corrupt AOF, say): waits for it to
    /// exit and returns its exit code and everything it printed.
    /// </summary>
    public static (int ExitCode, string Output) RunUntilExit(params string[] arguments) => RunUntilExitWith(null, arguments);

    /// <summary>
    /// Snapshots off unless the test asks for them (--save, or save lines in its file): with Redis's
    /// default schedule every test server would write dump.rdb into the directory it shares with
    /// the others on the way out, and the next one would load it at start.
    /// </summary>
    private static void AddNoSnapshots(ProcessStartInfo info, string? configFile, string[] arguments)
    {
        if (Array.IndexOf(arguments, "--save") >= 0)
            return;
        if (configFile is not null && File.Exists(configFile)
            && File.ReadLines(configFile).Any(line => line.TrimStart().StartsWith("save", StringComparison.OrdinalIgnoreCase)))
            return;
        info.ArgumentList.Add("--save");
        info.ArgumentList.Add("");
    }

    /// <summary>
    /// A directory of its own unless the test names one (--dir) or starts it from a file (whose
    /// CONFIG REWRITE would record the directory for a restart that outlives this server): a
    /// server's files (the dump.rdb a SAVE or DEBUG RELOAD writes) would otherwise land in the
    /// test binaries' folder, and every server started there later would load them.
    /// </summary>
    private static string? AddPrivateDirectory(ProcessStartInfo info, string? configFile, string[] arguments)
    {
        if (Array.IndexOf(arguments, "--dir") >= 0 || configFile is not null)
            return null;
        string directory = Directory.CreateTempSubdirectory("diagnostics-server-").FullName;
        info.ArgumentList.Add("--dir");
        info.ArgumentList.Add(directory);
        return directory;
    }

    /// <summary>As <see cref="RunUntilExit"/>, with a configuration file as the first argument.</summary>
    public static (int ExitCode, string Output) RunUntilExitWith(string? configFile, params string[] arguments)
    {
        var info = ServerStartInfo();
        if (configFile is not null)
            info.ArgumentList.Add(configFile);
        info.ArgumentList.Add("--port");
        info.ArgumentList.Add(FreePort().ToString());
        if (Array.IndexOf(arguments, "--http-port") < 0)
        {
            info.ArgumentList.Add("--http-port");
            info.ArgumentList.Add(FreePort().ToString());
        }
        AddNoSnapshots(info, configFile, arguments);
        foreach (var a in arguments)
            info.ArgumentList.Add(a);
        using var process = Process.Start(info)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        if (!process.WaitForExit(30_000))
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException("the server kept running; it was expected to refuse to start");
        }
        return (process.ExitCode, stdout.Result + stderr.Result);
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            _process.WaitForExit(10_000);
        }
        _process.Dispose();
        if (_privateDirectory is not null)
        {
            try
            {
                Directory.Delete(_privateDirectory, recursive: true);
            }
            catch (IOException)
            {
                // A file still held open by a child the kill missed; the temp folder keeps it.
            }
        }
    }
}
