namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// Debian's real redis-server, started on a free loopback port with a private temporary working
/// directory (so its dump.rdb / appendonlydir are the test's own). Used where a test needs files
/// Redis itself wrote. Dispose kills exactly the process it started and removes the directory.
/// </summary>
public sealed class RealRedisServer : IDisposable
{
    private readonly CapturedProcess _process;

    private RealRedisServer(CapturedProcess process, int port, string directory)
    {
        _process = process;
        Port = port;
        Directory = directory;
    }

    public int Port { get; }
    private bool _ownsDirectory;

    /// <summary>The server's --dir: dump.rdb and appendonlydir/ appear here.</summary>
    public string Directory { get; }

    public string Output => _process.Output;

    /// <summary>Starts redis-server with RDB snapshots off (--save '') plus <paramref name="arguments"/> ("--name", "value" pairs).</summary>
    public static RealRedisServer Start(params string[] arguments) => StartIn(null, arguments);

    /// <summary>
    /// Starts redis-server in <paramref name="workingDirectory"/> (its --dir), which the caller owns
    /// and which is left in place on dispose; null makes a private temporary directory.
    /// </summary>
    public static RealRedisServer StartIn(string? workingDirectory, params string[] arguments) => StartIn(workingDirectory, 0, arguments);

    /// <summary>
    /// Starts redis-server again where one ran before: the same <paramref name="port"/> and
    /// directory (its dump.rdb), as a restarted master its replicas reconnect to.
    /// </summary>
    public static RealRedisServer Restart(RealRedisServer stopped, params string[] arguments)
    {
        var server = StartIn(stopped.Directory, stopped.Port, arguments);
        server._ownsDirectory = stopped._ownsDirectory;
        stopped._ownsDirectory = false;
        return server;
    }

    /// <summary>Asks the server to SHUTDOWN with <paramref name="mode"/> (SAVE / NOSAVE) and waits for the process to end.</summary>
    public void Shutdown(string mode)
    {
        using (var client = Connect())
            client.Send("SHUTDOWN", mode);
        if (!_process.WaitForExit(30_000))
            throw new InvalidOperationException("redis-server did not stop after SHUTDOWN:\n" + Output);
    }

    private static RealRedisServer StartIn(string? workingDirectory, int fixedPort, string[] arguments)
    {
        string path = ExternalTool.Require("redis-server", "redis-server");
        string directory = workingDirectory ?? System.IO.Directory.CreateTempSubdirectory("redis-server-").FullName;
        // A free port can be taken by someone else before redis-server binds it: try a few.
        for (int attempt = 1; ; attempt++)
        {
            int port = fixedPort != 0 ? fixedPort : ServerProcess.FreePort();
            var process = CapturedProcess.Start(path, directory,
                ["--port", port.ToString(), "--bind", "127.0.0.1", "--dir", directory, "--save", "", "--daemonize", "no", "--logfile", "", .. arguments], killTree: true);
            var server = new RealRedisServer(process, port, directory) { _ownsDirectory = workingDirectory is null };
            if (process.WaitUntil(() => process.Output.Contains("Ready to accept connections", StringComparison.Ordinal)))
                return server;
            string log = server.Output;
            process.Dispose();
            if (attempt >= 3 || fixedPort != 0 || !log.Contains("Address already in use", StringComparison.Ordinal))
            {
                if (workingDirectory is null)
                    CapturedProcess.TryDeleteDirectory(directory);
                throw new InvalidOperationException($"redis-server did not start on port {port}:\n{log}");
            }
        }
    }

    public RespClient Connect() => new(Port);

    /// <summary>Idempotent: a test may stop the server early (a master going away) and still dispose it.</summary>
    public void Dispose()
    {
        _process.Dispose();
        if (_ownsDirectory)
            CapturedProcess.TryDeleteDirectory(Directory);
    }
}
