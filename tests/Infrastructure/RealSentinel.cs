using System.Text;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// Debian's real redis-sentinel, started on a free loopback port from its own config file in a
/// private temporary directory (Sentinel rewrites that file as it learns replicas, other
/// Sentinels and new epochs). Its log is kept for failure messages. Dispose kills exactly the
/// process it started and removes the directory.
/// </summary>
public sealed class RealSentinel : IDisposable
{
    private readonly CapturedProcess _process;

    private RealSentinel(CapturedProcess process, int port, string directory)
    {
        _process = process;
        Port = port;
        Directory = directory;
    }

    public int Port { get; }
    public string Directory { get; }

    public string Output => _process.Output;

    /// <summary>
    /// Starts a Sentinel that monitors <paramref name="masterName"/> at 127.0.0.1:<paramref name="masterPort"/>
    /// with <paramref name="quorum"/>, plus <paramref name="masterSettings"/> ("down-after-milliseconds", "1000", ...)
    /// written as "sentinel &lt;name&gt; &lt;master&gt; &lt;value&gt;" lines.
    /// </summary>
    public static RealSentinel Start(string masterName, int masterPort, int quorum, params string[] masterSettings)
    {
        string path = ExternalTool.Require("redis-sentinel", "redis-sentinel");
        string directory = System.IO.Directory.CreateTempSubdirectory("redis-sentinel-").FullName;
        // A free port can be taken by someone else before the Sentinel binds it: try a few.
        for (int attempt = 1; ; attempt++)
        {
            int port = ServerProcess.FreePort();
            var config = new StringBuilder();
            config.Append("port ").Append(port).Append('\n');
            config.Append("bind 127.0.0.1\n");
            config.Append("daemonize no\n");
            config.Append("logfile \"\"\n");
            config.Append("dir ").Append(directory).Append('\n');
            config.Append("sentinel monitor ").Append(masterName).Append(" 127.0.0.1 ").Append(masterPort).Append(' ').Append(quorum).Append('\n');
            for (int i = 0; i + 1 < masterSettings.Length; i += 2)
                config.Append("sentinel ").Append(masterSettings[i]).Append(' ').Append(masterName).Append(' ').Append(masterSettings[i + 1]).Append('\n');
            string configFile = Path.Combine(directory, "sentinel.conf");
            File.WriteAllText(configFile, config.ToString());

            var process = CapturedProcess.Start(path, directory, [configFile], killTree: false);
            var sentinel = new RealSentinel(process, port, directory);
            if (process.WaitUntil(sentinel.IsReady))
                return sentinel;
            string log = sentinel.Output;
            process.Dispose();
            if (attempt >= 3 || !log.Contains("Address already in use", StringComparison.Ordinal))
            {
                CapturedProcess.TryDeleteDirectory(directory);
                throw new InvalidOperationException($"redis-sentinel did not start on port {port}:\n{log}");
            }
        }
    }

    /// <summary>Ready once it monitors the master (its "+monitor" event) and answers on its port.</summary>
    private bool IsReady()
    {
        if (!Output.Contains("+monitor master", StringComparison.Ordinal))
            return false;
        try
        {
            using var client = Connect();
            return client.Call("PING").Text == "PONG";
        }
        catch (Exception ex) when (ex is IOException or System.Net.Sockets.SocketException)
        {
            return false;
        }
    }

    public RespClient Connect() => new(Port);

    /// <summary>The master's address as this Sentinel tells clients (SENTINEL get-master-addr-by-name).</summary>
    public (string Host, int Port)? MasterAddress(string masterName)
    {
        using var client = Connect();
        var reply = client.Call("SENTINEL", "get-master-addr-by-name", masterName);
        if (reply.IsNull || reply.IsError)
            return null;
        return (reply.Array[0].Text!, int.Parse(reply.Array[1].Text!));
    }

    public void Dispose()
    {
        _process.Dispose();
        CapturedProcess.TryDeleteDirectory(Directory);
    }
}
