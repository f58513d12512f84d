using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Text.RegularExpressions;

namespace Diagnostics.Benchmarks;

/// <summary>
/// One server process on a free loopback port: ours (dotnet Diagnostics.Server.dll --port N ...),
/// Debian's redis-server (--port N --save '' --appendonly no, so neither writes to disk,
/// unless a persistence suite passes its AOF settings and directory) or, with --garnet,
/// Microsoft Garnet (garnet-server --port N --bind 127.0.0.1: no AOF, no checkpoints, as shipped).
/// Its output is kept (last lines) to explain a crash.
/// </summary>
public sealed class ServerUnderTest : IDisposable
{
    private const int KeptOutputLines = 100;
    private readonly Process _process;
    private readonly Queue<string> _output = new();
    private readonly ScratchDirectory? _directory;
    private readonly long _startedAt;
    private volatile bool _stopped;

    private ServerUnderTest(string name, Process process, long startedAt, int port, int? httpPort, string commandLine, ScratchDirectory? directory)
    {
        Name = name;
        _process = process;
        _startedAt = startedAt;
        Port = port;
        HttpPort = httpPort;
        CommandLine = commandLine;
        _directory = directory;
    }

    public string Name { get; }
    public int Port { get; }
    /// <summary>Our server's HTTP listener (API, /metrics); null for redis-server.</summary>
    public int? HttpPort { get; }
    public string CommandLine { get; }
    public bool IsOurs => Name == Ours;
    public bool IsGarnet => Name == Garnet;
    /// <summary>The scratch --dir the server owns (deleted when it stops), if it was given one.</summary>
    public ScratchDirectory? DataDirectory => _directory;
    /// <summary>Wall time since just before the process was started (load times count from there).</summary>
    public TimeSpan SinceStart => Stopwatch.GetElapsedTime(_startedAt);

    /// <summary>
    /// The command line as the report shows it: the dll without its build path, the scratch
    /// directory as &lt;dir&gt; (it is a different temp folder every run).
    /// </summary>
    public string DisplayCommandLine
    {
        get
        {
            string line = CommandLine.Replace(OurServerDll(), "Diagnostics.Server.dll", StringComparison.Ordinal);
            return _directory is null ? line : line.Replace(_directory.Path, "<dir>", StringComparison.Ordinal);
        }
    }

    private static readonly List<ServerUnderTest> Running = [];
    // Set by StopAll: a signal handler runs beside the main thread, which must not start a
    // server after the clean-up has passed.
    private static bool _stopping;

    public const string Ours = "ours";
    public const string Redis = "redis";
    public const string Garnet = "garnet";

    /// <summary>The server's dll, copied next to the harness by the project reference.</summary>
    public static string OurServerDll()
    {
        string dll = Path.Combine(AppContext.BaseDirectory, "Diagnostics.Server.dll");
        if (!File.Exists(dll))
            throw new HarnessException($"{dll} is missing: run the harness with `dotnet run -c Release --project tests/Diagnostics.Benchmarks`, which builds the server too");
        return dll;
    }

    /// <summary>
    /// Starts our server with <paramref name="serverArguments"/> (the operator's --server-args).
    /// A persistence suite adds its <paramref name="persistence"/> settings and a
    /// <paramref name="directory"/> for --dir, which the server then owns and deletes when it
    /// stops. Unless <paramref name="waitUntilReady"/> is false, returns once it answers PING.
    /// </summary>
    public static ServerUnderTest StartOurs(IReadOnlyList<string> serverArguments,
        IReadOnlyList<string>? persistence = null, ScratchDirectory? directory = null, bool waitUntilReady = true,
        IReadOnlyDictionary<string, string>? environment = null)
    {
        int port = FreePort();
        // The HTTP listener runs as shipped, on its own free port.
        int httpPort = FreePort();
        // Snapshots off, as the redis-server it is compared with runs (--save "").
        var arguments = new List<string> { OurServerDll(), "--port", port.ToString(CultureInfo.InvariantCulture), "--http-port", httpPort.ToString(CultureInfo.InvariantCulture), "--save", "" };
        if (persistence is not null)
            arguments.AddRange(persistence);
        if (directory is not null)
            arguments.AddRange(["--dir", directory.Path]);
        arguments.AddRange(serverArguments);
        return Start(Ours, "dotnet", arguments, port, httpPort, directory, waitUntilReady, environment: environment);
    }

    /// <summary>
    /// Starts redis-server; without <paramref name="persistence"/> settings it runs with
    /// --appendonly no. It always gets a private --dir (<paramref name="directory"/>, or a new
    /// scratch one), owned and deleted when it stops, so redis-server never touches the repo.
    /// </summary>
    public static ServerUnderTest StartRedis(string redisServer,
        IReadOnlyList<string>? persistence = null, ScratchDirectory? directory = null, bool waitUntilReady = true)
    {
        int port = FreePort();
        directory ??= ScratchDirectory.Create("diagnostics-bench-redis-");
        var arguments = new List<string> { "--port", port.ToString(CultureInfo.InvariantCulture), "--save", "" };
        arguments.AddRange(persistence ?? ["--appendonly", "no"]);
        arguments.AddRange(["--bind", "127.0.0.1", "--dir", directory.Path, "--daemonize", "no"]);
        return Start(Redis, redisServer, arguments, port, null, directory, waitUntilReady);
    }

    /// <summary>
    /// Starts Microsoft Garnet as shipped but for what makes it comparable with the redis-server
    /// beside it: loopback only, and Lua on (redis-server always has it; Garnet's is off by
    /// default). Garnet persists nothing unless asked (no --aof, no --checkpoint-freq, no
    /// --storage-tier), as redis-server runs here with --save '' --appendonly no. It gets a
    /// private scratch directory as working directory and --checkpointdir, owned and deleted when
    /// it stops, so a SAVE or anything it writes never lands in the repository.
    /// </summary>
    public static ServerUnderTest StartGarnet(string garnetServer, IReadOnlyList<string>? extra = null, ScratchDirectory? directory = null, bool waitUntilReady = true)
    {
        int port = FreePort();
        directory ??= ScratchDirectory.Create("diagnostics-bench-garnet-");
        var arguments = new List<string> { "--port", port.ToString(CultureInfo.InvariantCulture), "--bind", "127.0.0.1", "--lua", "--checkpointdir", directory.Path };
        if (extra is not null)
            arguments.AddRange(extra);
        return Start(Garnet, garnetServer, arguments, port, null, directory, waitUntilReady, workingDirectory: directory.Path);
    }

    private static ServerUnderTest Start(string name, string program, List<string> arguments, int port, int? httpPort, ScratchDirectory? directory, bool waitUntilReady,
        string? workingDirectory = null, IReadOnlyDictionary<string, string>? environment = null)
    {
        var info = new ProcessStartInfo(program)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        if (workingDirectory is not null)
            info.WorkingDirectory = workingDirectory;
        foreach (var (variable, value) in environment ?? new Dictionary<string, string>())
            info.Environment[variable] = value;
        foreach (string a in arguments)
            info.ArgumentList.Add(a);
        string commandLine = Path.GetFileName(program) + " " + string.Join(' ', arguments.Select(a => a.Length == 0 ? "''" : a));
        long startedAt = Stopwatch.GetTimestamp();
        Process process;
        try
        {
            process = Process.Start(info) ?? throw new HarnessException($"could not start {commandLine}");
        }
        catch
        {
            directory?.Dispose();
            throw;
        }
        var server = new ServerUnderTest(name, process, startedAt, port, httpPort, commandLine, directory);
        bool stopping;
        lock (Running)
        {
            stopping = _stopping;
            Running.Add(server);
        }
        if (stopping)
        {
            server.Dispose();
            throw new HarnessException("interrupted");
        }
        process.OutputDataReceived += (_, e) => server.Keep(e.Data);
        process.ErrorDataReceived += (_, e) => server.Keep(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        if (waitUntilReady)
            server.WaitUntilReady(TimeSpan.FromSeconds(60));
        return server;
    }

    private void Keep(string? line)
    {
        if (line is null)
            return;
        lock (_output)
        {
            _output.Enqueue(line);
            if (_output.Count > KeptOutputLines)
                _output.Dequeue();
        }
    }

    public string OutputTail
    {
        get
        {
            lock (_output)
                return string.Join('\n', _output);
        }
    }

    /// <summary>Ready means it answers PING, not merely that the port accepts connections.</summary>
    private void WaitUntilReady(TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (DateTime.UtcNow < deadline)
        {
            EnsureRunning();
            try
            {
                using var connection = new RespConnection(Port);
                var reply = connection.Call("PING");
                if (reply.Text == "PONG")
                    return;
            }
            catch (Exception e) when (e is SocketException or IOException)
            {
            }
            Thread.Sleep(100);
        }
        throw new HarnessException($"{Name} server did not answer PING on port {Port} within {timeout.TotalSeconds:0} s:\n{OutputTail}");
    }

    /// <summary>The first match of <paramref name="pattern"/> in the kept output, waiting up to <paramref name="timeout"/> for it (output arrives asynchronously).</summary>
    public Match? WaitForOutput(Regex pattern, TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (true)
        {
            var match = pattern.Match(OutputTail);
            if (match.Success)
                return match;
            if (DateTime.UtcNow >= deadline)
                return null;
            Thread.Sleep(20);
        }
    }

    public void EnsureRunning()
    {
        if (_stopped)
            throw new HarnessException($"{Name} server was stopped");
        if (_process.HasExited)
            throw new HarnessException($"{Name} server ({CommandLine}) exited with code {_process.ExitCode}:\n{OutputTail}");
    }

    /// <summary>Resident set size from /proc (Linux), or null where that is not available.</summary>
    public long? ResidentBytes()
    {
        try
        {
            foreach (string line in File.ReadLines($"/proc/{_process.Id}/status"))
            {
                if (!line.StartsWith("VmRSS:", StringComparison.Ordinal))
                    continue;
                string kb = line["VmRSS:".Length..].Replace("kB", "", StringComparison.Ordinal).Trim();
                return long.Parse(kb, CultureInfo.InvariantCulture) * 1024;
            }
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }
        return null;
    }

    /// <summary>
    /// CPU time the process has used so far, user plus system, all threads (also exited ones):
    /// utime + stime of /proc/&lt;pid&gt;/stat, in clock ticks (sysconf(_SC_CLK_TCK), 100 Hz on Linux).
    /// Our server runs inside the dotnet host process, so its pid is the server's.
    /// </summary>
    public int Pid => _process.Id;

    public TimeSpan CpuTime()
    {
        EnsureRunning();
        return ProcStat.CpuTime(_process.Id)
            ?? throw new HarnessException($"cannot read /proc/{_process.Id}/stat for the {Name} server's CPU time; the diagnostics and studio suites need Linux's /proc");
    }

    public RespConnection Connect() => new(Port);

    public static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    /// <summary>Stops every server still running (Ctrl+C, or the harness exiting on an error).</summary>
    public static void StopAll()
    {
        ServerUnderTest[] servers;
        lock (Running)
        {
            _stopping = true;
            servers = [.. Running];
        }
        foreach (var server in servers)
            server.Dispose();
    }

    public void Dispose()
    {
        lock (Running)
        {
            if (!Running.Remove(this))
                return;
            _stopped = true;
        }
        try
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
                _process.WaitForExit(10_000);
            }
        }
        catch (InvalidOperationException)
        {
        }
        _process.Dispose();
        _directory?.Dispose();
    }
}
