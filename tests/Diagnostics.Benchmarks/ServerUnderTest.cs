using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;

namespace Diagnostics.Benchmarks;

/// <summary>
/// One server process on a free loopback port: ours (dotnet Diagnostics.Server.dll --port N ...)
/// or Debian's redis-server (--port N --save '' --appendonly no, so neither writes to disk).
/// Its output is kept (last lines) to explain a crash.
/// </summary>
public sealed class ServerUnderTest : IDisposable
{
    private const int KeptOutputLines = 100;
    private readonly Process _process;
    private readonly Queue<string> _output = new();
    private readonly string? _workingDirectory;

    private ServerUnderTest(string name, Process process, int port, string commandLine, string? workingDirectory)
    {
        Name = name;
        _process = process;
        Port = port;
        CommandLine = commandLine;
        _workingDirectory = workingDirectory;
    }

    public string Name { get; }
    public int Port { get; }
    public string CommandLine { get; }
    public bool IsOurs => Name == Ours;

    private static readonly List<ServerUnderTest> Running = [];

    public const string Ours = "ours";
    public const string Redis = "redis";

    /// <summary>The server's dll, copied next to the harness by the project reference.</summary>
    public static string OurServerDll()
    {
        string dll = Path.Combine(AppContext.BaseDirectory, "Diagnostics.Server.dll");
        if (!File.Exists(dll))
            throw new HarnessException($"{dll} is missing: run the harness with `dotnet run -c Release --project tests/Diagnostics.Benchmarks`, which builds the server too");
        return dll;
    }

    public static ServerUnderTest StartOurs(IReadOnlyList<string> extraArguments)
    {
        int port = FreePort();
        var arguments = new List<string> { OurServerDll(), "--port", port.ToString(CultureInfo.InvariantCulture) };
        arguments.AddRange(extraArguments);
        return Start(Ours, "dotnet", arguments, port, null);
    }

    public static ServerUnderTest StartRedis(string redisServer)
    {
        int port = FreePort();
        // A private working directory: nothing is saved, but redis-server must never touch the repo.
        string dir = Directory.CreateTempSubdirectory("diagnostics-bench-redis-").FullName;
        var arguments = new List<string>
        {
            "--port", port.ToString(CultureInfo.InvariantCulture), "--save", "", "--appendonly", "no",
            "--bind", "127.0.0.1", "--dir", dir, "--daemonize", "no",
        };
        return Start(Redis, redisServer, arguments, port, dir);
    }

    private static ServerUnderTest Start(string name, string program, List<string> arguments, int port, string? workingDirectory)
    {
        var info = new ProcessStartInfo(program)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string a in arguments)
            info.ArgumentList.Add(a);
        string commandLine = Path.GetFileName(program) + " " + string.Join(' ', arguments.Select(a => a.Length == 0 ? "''" : a));
        var process = Process.Start(info) ?? throw new HarnessException($"could not start {commandLine}");
        var server = new ServerUnderTest(name, process, port, commandLine, workingDirectory);
        lock (Running)
            Running.Add(server);
        process.OutputDataReceived += (_, e) => server.Keep(e.Data);
        process.ErrorDataReceived += (_, e) => server.Keep(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
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

    public void EnsureRunning()
    {
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
            servers = [.. Running];
        foreach (var server in servers)
            server.Dispose();
    }

    public void Dispose()
    {
        lock (Running)
        {
            if (!Running.Remove(this))
                return;
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
        if (_workingDirectory is not null)
        {
            try
            {
                Directory.Delete(_workingDirectory, recursive: true);
            }
            catch (IOException)
            {
            }
        }
    }
}
