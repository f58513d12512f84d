using System.Diagnostics;
using System.Text;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Replication;

/// <summary>
/// Debian's redis-sentinel 7.0, unchanged, over servers of ours: a master and two replicas, three
/// Sentinels with a quorum of two. The master is killed (SIGKILL) under a write load whose writes
/// are acknowledged with WAIT 1; the Sentinels agree it is down, promote a replica (REPLICAOF NO
/// ONE, CONFIG REWRITE and CLIENT KILL in one MULTI/EXEC) and point the other one at it. Every
/// acknowledged write must be on the new master and on the replica that follows it.
/// </summary>
public sealed class SentinelFailoverTests
{
    private const string MasterName = "mymaster";
    // Writes pipelined before each WAIT 1.
    private const int Batch = 10;
    // A master is down for a Sentinel once it has not answered a PING for this long. At 1 s, one
    // CI run (2 cores, the rest of the suite running) saw a second failover 2 s after the first.
    private const string DownAfterMs = "2000";

    /// <summary>Our servers, each from its own config file in its own directory (CONFIG REWRITE writes there).</summary>
    private sealed class Node(ServerProcess process, TempDirectory directory, string configFile) : IDisposable
    {
        public ServerProcess Process { get; set; } = process;
        public TempDirectory Directory { get; } = directory;
        public string ConfigFile { get; } = configFile;
        public int Port => Process.Port;

        public static Node Start(string name, int? masterPort)
        {
            var directory = new TempDirectory($"sentinel-{name}-");
            string configFile = directory.File("server.conf");
            var config = new StringBuilder();
            config.Append("dir ").Append(directory.Path).Append('\n');
            config.Append("enable-debug-command yes\n");
            config.Append("repl-diskless-sync-delay 0\n");
            if (masterPort is { } port)
                config.Append("replicaof 127.0.0.1 ").Append(port).Append('\n');
            File.WriteAllText(configFile, config.ToString());
            try
            {
                return new Node(ServerProcess.StartWith(configFile), directory, configFile);
            }
            catch
            {
                directory.Dispose();
                throw;
            }
        }

        /// <summary>Starts the server again from its (possibly rewritten) config file, on the same port.</summary>
        public void Restart()
        {
            int port = Port;
            Process.Dispose();
            Process = ServerProcess.StartWith(ConfigFile, "--port", port.ToString());
        }

        public void Dispose()
        {
            Process.Dispose();
            Directory.Dispose();
        }
    }

    [Fact]
    public void SentinelPromotesAReplicaWhenTheMasterDiesAndNoAcknowledgedWriteIsLost()
    {
        var clock = Stopwatch.StartNew();
        var nodes = new List<Node>();
        var sentinels = new List<RealSentinel>();
        string Logs()
        {
            // The Sentinels' events come last: a failure report that is cut keeps its end.
            var text = new StringBuilder();
            foreach (var n in nodes)
                text.Append($"\n--- server :{n.Port} ---\n").Append(Tail(n.Process.Output, 60));
            foreach (var s in sentinels)
                text.Append($"\n--- sentinel :{s.Port} ---\n").Append(s.Output);
            return text.ToString();
        }
        string Step(string what) => $"[{clock.ElapsedMilliseconds} ms] {what}";
        try
        {
            var master = Node.Start("master", null);
            nodes.Add(master);
            // Both replicas start at once, as do the Sentinels: on 2 cores each start takes seconds.
            nodes.AddRange(StartAll(["replica1", "replica2"], name => Node.Start(name, master.Port)));
            using (var m = master.Process.Connect())
            {
                foreach (var replica in nodes.Skip(1))
                {
                    using var r = replica.Process.Connect();
                    ReplicaSetup.WaitInSync(m, r);
                }
            }
            long readyAt = clock.ElapsedMilliseconds;

            // The write load, from now until the kill: writes, then WAIT 1; what a replica confirmed is acknowledged.
            var acknowledged = new List<int>();
            int sent = 0;
            var writing = new Thread(() =>
            {
                try
                {
                    using var w = master.Process.Connect();
                    var batch = new string[Batch + 1][];
                    batch[Batch] = ["WAIT", "1", "1000"];
                    for (int first = 0; ; first += Batch)
                    {
                        for (int i = 0; i < Batch; i++)
                            batch[i] = ["SET", "key:" + (first + i), "value:" + (first + i)];
                        w.SendRaw(RespClient.EncodeAll(batch));
                        for (int i = 0; i < Batch; i++)
                            if (w.Read().IsError)
                                return;
                        Volatile.Write(ref sent, first + Batch);
                        var wait = w.Read();
                        if (wait.Kind == ':' && wait.Integer >= 1)
                            lock (acknowledged)
                                for (int i = 0; i < Batch; i++)
                                    acknowledged.Add(first + i);
                    }
                }
                catch (Exception ex) when (ex is IOException or System.Net.Sockets.SocketException or ObjectDisposedException)
                {
                    // The master died under it.
                }
            })
            { IsBackground = true, Name = "sentinel test writer" };
            writing.Start();

            sentinels.AddRange(StartAll([1, 2, 3], _ => RealSentinel.Start(MasterName, master.Port, 2,
                "down-after-milliseconds", DownAfterMs, "failover-timeout", "10000", "parallel-syncs", "1")));
            // Each Sentinel learns the replicas from the master's INFO and the other Sentinels
            // from the hello messages on the master's and the replicas' __sentinel__:hello.
            foreach (var sentinel in sentinels)
                Poll.Until(() => KnowsEveryone(sentinel), () => Step($"sentinel :{sentinel.Port} saw both replicas and both other sentinels{Logs()}"), 30_000);
            long watchedAt = clock.ElapsedMilliseconds;
            Poll.Until(() => { lock (acknowledged) return acknowledged.Count >= 1000; }, () => Step($"1000 writes acknowledged under load (sent {Volatile.Read(ref sent)}){Logs()}"), 20_000);

            int oldPort = master.Port;
            master.Process.KillHard();
            Assert.True(writing.Join(10_000), Step("the writer stopped once the master died"));
            int[] acked;
            lock (acknowledged)
                acked = [.. acknowledged];
            long killedAt = clock.ElapsedMilliseconds;

            // Sentinel promotes a replica: clients asking it find the new master.
            int firstNamed = 0;
            Poll.Until(() =>
            {
                var address = sentinels[0].MasterAddress(MasterName);
                if (address is not { } a || a.Port == oldPort)
                    return false;
                firstNamed = a.Port;
                return true;
            }, () => Step($"a sentinel named a new master{Logs()}"), 30_000);
            long promotedAt = clock.ElapsedMilliseconds;

            // The failover has settled once every Sentinel names the same master, it answers ROLE
            // master, and the other replica follows it with its link up. Should the Sentinels elect
            // again (a second failover, of the master just promoted), this follows their last word.
            // Sentinel ends each reconfiguration with CLIENT KILL TYPE normal: each look is a new connection.
            int newPort = 0;
            Poll.Until(() =>
            {
                newPort = 0;
                foreach (var sentinel in sentinels)
                {
                    if (sentinel.MasterAddress(MasterName) is not { } a || a.Port == oldPort || (newPort != 0 && a.Port != newPort))
                        return false;
                    newPort = a.Port;
                }
                if (Query(newPort, "ROLE").Array[0].Text != "master")
                    return false;
                var role = Query(nodes.Single(n => n.Port != newPort && n.Port != oldPort).Port, "ROLE").Array;
                return role[0].Text == "slave" && role[2].Integer == newPort && role[3].Text == "connected";
            }, () => Step($"the sentinels agree on one new master, which the other replica follows (named first :{firstNamed}, last :{newPort}){Logs()}"), 40_000);
            var newMaster = nodes.Single(n => n.Port == newPort);
            var follower = nodes.Single(n => n.Port != newPort && n.Port != oldPort);

            // The old master comes back (from its own file, a master with no data); Sentinel will
            // turn it into a replica of the new master (checked last: Sentinel waits 8 s first).
            var oldMaster = nodes[0];
            oldMaster.Restart();

            using var nm = newMaster.Process.Connect();
            using var f = follower.Process.Connect();
            var info = InfoFields.Read(f, "replication");
            Assert.Equal(newPort.ToString(), info["master_port"]);
            Assert.Equal("up", info["master_link_status"]);

            // Sentinel's reconfiguration was persisted by CONFIG REWRITE in each server's file.
            Assert.DoesNotContain("replicaof", File.ReadAllText(newMaster.ConfigFile), StringComparison.OrdinalIgnoreCase);
            Assert.Contains($"replicaof 127.0.0.1 {newPort}", File.ReadAllText(follower.ConfigFile), StringComparison.OrdinalIgnoreCase);

            // A client that asks Sentinel for the master writes there.
            var (host, port) = sentinels[1].MasterAddress(MasterName)!.Value;
            using (var client = new RespClient(port, host))
            {
                RespAssert.Ok(client.Call("SET", "after-failover", "yes"));
                RespAssert.Integer(1, client.Call("WAIT", "1", "5000"));
            }

            // No acknowledged write is lost, on the new master and on the replica following it.
            ReplicaSetup.WaitInSync(nm, f);
            AssertHas(nm, acked, $"the new master :{newPort}");
            AssertHas(f, acked, $"the replica :{follower.Port}");
            Assert.Equal(nm.Call("DEBUG", "DIGEST").Text, f.Call("DEBUG", "DIGEST").Text);
            Assert.Equal(nm.Call("DBSIZE").Integer, f.Call("DBSIZE").Integer);

            long checkedAt = clock.ElapsedMilliseconds;

            // The old master, back, is made a replica of the new master (+convert-to-slave) and holds all of it.
            Poll.Until(() =>
            {
                var role = Query(oldPort, "ROLE").Array;
                return role[0].Text == "slave" && role[2].Integer == newPort && role[3].Text == "connected";
            }, () => Step($"the restarted old master :{oldPort} follows :{newPort} (ROLE {Query(oldPort, "ROLE")}){Logs()}"), 30_000);
            // The Sentinel's event line is read from its output as it comes: the REPLICAOF it sent can
            // take effect (ROLE above) before the line it logged first has reached the test.
            Poll.Until(() => sentinels.Any(s => s.Output.Contains($"+convert-to-slave slave 127.0.0.1:{oldPort}", StringComparison.Ordinal)),
                () => Step($"a sentinel logged +convert-to-slave for :{oldPort}{Logs()}"), 15_000);
            Assert.Contains($"replicaof 127.0.0.1 {newPort}", File.ReadAllText(oldMaster.ConfigFile), StringComparison.OrdinalIgnoreCase);
            using (var old = oldMaster.Process.Connect())
            {
                ReplicaSetup.WaitInSync(nm, old);
                AssertHas(old, acked, $"the old master :{oldPort}, now a replica");
                Assert.Equal(nm.Call("DEBUG", "DIGEST").Text, old.Call("DEBUG", "DIGEST").Text);
            }

            Console.WriteLine($"sentinel failover: servers in sync at {readyAt} ms, sentinels watching all at {watchedAt} ms, "
                + $"master killed at {killedAt} ms after {acked.Length} acknowledged writes of {Volatile.Read(ref sent)} sent; "
                + $"new master named {promotedAt - killedAt} ms after the kill"
                + (firstNamed == newPort ? "; " : $" (:{firstNamed}, then :{newPort} after a second election); ")
                + $"data checked at {checkedAt} ms; "
                + $"old master converted at {clock.ElapsedMilliseconds} ms");
        }
        catch (Exception ex) when (ex is not Xunit.Sdk.XunitException || !ex.Message.Contains("--- sentinel", StringComparison.Ordinal))
        {
            Assert.Fail($"{Step(ex.ToString())}{Logs()}");
        }
        finally
        {
            foreach (var s in sentinels)
                s.Dispose();
            foreach (var n in nodes)
                n.Dispose();
        }
    }

    /// <summary>Starts one of each at once; all that started are returned (so disposed) even when one fails.</summary>
    private static List<T> StartAll<TArg, T>(TArg[] arguments, Func<TArg, T> start)
    {
        var starting = Array.ConvertAll(arguments, a => Task.Run(() => start(a)));
        try
        {
            Task.WaitAll(starting);
        }
        catch (AggregateException ex)
        {
            foreach (var t in starting)
                if (t.IsCompletedSuccessfully && t.Result is IDisposable started)
                    started.Dispose();
            throw ex.InnerExceptions[0];
        }
        return [.. Array.ConvertAll(starting, t => t.Result)];
    }

    /// <summary>SENTINEL MASTER's num-slaves and num-other-sentinels, and both replicas reachable (flags "slave" alone).</summary>
    private static bool KnowsEveryone(RealSentinel sentinel)
    {
        using var s = sentinel.Connect();
        var master = s.Call("SENTINEL", "MASTER", MasterName).ToMap();
        if (master["num-slaves"].Text != "2" || master["num-other-sentinels"].Text != "2")
            return false;
        foreach (var replica in s.Call("SENTINEL", "REPLICAS", MasterName).Array)
            if (replica.ToMap()["flags"].Text != "slave")
                return false;
        return true;
    }

    /// <summary>
    /// One command on a new connection, again on a new one when a Sentinel's CLIENT KILL TYPE
    /// normal (the end of each reconfiguration) closed it first.
    /// </summary>
    private static RespValue Query(int port, params string[] command)
    {
        for (int attempt = 1; ; attempt++)
        {
            try
            {
                using var client = new RespClient(port);
                return client.Call(command);
            }
            catch (IOException) when (attempt < 5)
            {
            }
        }
    }

    private static void AssertHas(RespClient client, int[] keys, string where)
    {
        const int Chunk = 500;
        for (int at = 0; at < keys.Length; at += Chunk)
        {
            int n = Math.Min(Chunk, keys.Length - at);
            var args = new string[n + 1];
            args[0] = "MGET";
            for (int i = 0; i < n; i++)
                args[i + 1] = "key:" + keys[at + i];
            var values = client.Call(args).Array;
            for (int i = 0; i < n; i++)
                Assert.True(values[i].Text == "value:" + keys[at + i], $"acknowledged write key:{keys[at + i]} is missing on {where} (got {values[i]})");
        }
    }

    private static string Tail(string text, int lines)
    {
        var all = text.Split('\n');
        return string.Join('\n', all.Skip(Math.Max(0, all.Length - lines)));
    }
}
