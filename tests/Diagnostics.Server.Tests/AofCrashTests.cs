using System.Net.Sockets;
using Diagnostics.Server.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Diagnostics.Server.Tests;

/// <summary>
/// A write whose reply arrived survives a crash of the process: with appendfsync always (durable
/// before the reply) and with everysec (in the kernel before the reply, as Redis). Several rounds
/// of concurrent writers are cut off by SIGKILL at a random moment, on one directory whose data
/// accumulates; after each restart every acknowledged write is there, nothing that was never sent
/// appears, and counters are at least their last acknowledged value and at most that plus the
/// increments sent whose replies were lost. The seed (AOF_CRASH_SEED to replay one) is in every
/// failure message.
/// </summary>
public sealed class AofCrashTests(ITestOutputHelper output)
{
    private const int Rounds = 5;
    private const int Writers = 4;
    private const int SetsPerBatch = 3;

    /// <param name="rewriting">BGREWRITEAOF runs back to back during the load, so kills land in
    /// every phase of a rewrite too: the cut, the compaction, the manifest switches.</param>
    [Theory]
    [InlineData("always", false)]
    [InlineData("everysec", false)]
    [InlineData("always", true)]
    public void AcknowledgedWritesSurviveKillNine(string fsync, bool rewriting)
    {
        int seed = Environment.GetEnvironmentVariable("AOF_CRASH_SEED") is { Length: > 0 } fixedSeed
            ? int.Parse(fixedSeed)
            : Random.Shared.Next();
        var random = new Random(seed);
        using var dir = new TempDirectory("aof-crash-");
        var expected = new Expectation(seed);
        var killDelays = new List<int>();

        for (int round = 0; round < Rounds; round++)
        {
            using var server = StartServer(dir, fsync);
            if (round > 0)
            {
                Assert.True(server.Output.Contains("DB loaded from append only file", StringComparison.Ordinal),
                    $"seed {seed}, round {round}: the restart did not log loading the AOF:\n{server.Output}");
                output.WriteLine(expected.Verify(server, $"after the kill of round {round - 1} (delay {killDelays[^1]} ms)"));
            }

            var writers = new Writer[Writers];
            for (int t = 0; t < Writers; t++)
                writers[t] = new Writer(server.Port, round, t);
            using var start = new ManualResetEventSlim();
            var threads = new Thread[Writers];
            for (int t = 0; t < Writers; t++)
            {
                var writer = writers[t];
                threads[t] = new Thread(() => writer.Run(start)) { IsBackground = true, Name = $"aof crash writer {t}" };
                threads[t].Start();
            }

            int delay = random.Next(50, 501);
            killDelays.Add(delay);
            var rewriter = rewriting ? new Thread(() => RewriteUntilKilled(server.Port, start)) { IsBackground = true, Name = "aof crash rewriter" } : null;
            rewriter?.Start();
            start.Set();
            Thread.Sleep(delay);
            // On a loaded machine the first acknowledgement can come later than the random delay:
            // kill only once there is something to lose, or the round would test nothing.
            SpinWait.SpinUntil(() => Array.Exists(writers, w => Volatile.Read(ref w.AcknowledgedCount) > 0), 10_000);
            server.KillHard();
            Assert.True(rewriter?.Join(TimeSpan.FromSeconds(30)) ?? true, $"seed {seed}, round {round}: the rewriter did not stop after the kill");
            foreach (var thread in threads)
                Assert.True(thread.Join(TimeSpan.FromSeconds(30)), $"seed {seed}, round {round}: a writer did not stop after the kill");

            foreach (var writer in writers)
            {
                Assert.True(writer.Failure is null, $"seed {seed}, round {round}, writer {writer.Index}: {writer.Failure}");
                expected.Add(writer);
            }
            output.WriteLine($"seed {seed}, round {round}: killed after {delay} ms; {writers.Sum(w => w.AcknowledgedSets.Count)} SETs and "
                + $"{writers.Count(w => w.LastIncrReply is not null)} counters acknowledged, {writers.Sum(w => w.UnacknowledgedSets.Count)} SETs unanswered");
            Assert.True(writers.Sum(w => w.AcknowledgedSets.Count) > 0,
                $"seed {seed}, round {round}: no write was acknowledged in {delay} ms; the round tested nothing");
        }

        using (var server = StartServer(dir, fsync))
        {
            Assert.True(server.Output.Contains("DB loaded from append only file", StringComparison.Ordinal),
                $"seed {seed}: the final restart did not log loading the AOF:\n{server.Output}");
            output.WriteLine(expected.Verify(server, $"after the kill of round {Rounds - 1} (delay {killDelays[^1]} ms)"));
            using var c = server.Connect();
            c.Send("SHUTDOWN");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)), $"seed {seed}: SHUTDOWN did not stop the server");
        }

        string manifest = Path.Combine(dir.AppendDirectory, "appendonly.aof.manifest");
        if (rewriting)
            Assert.False(File.ReadAllText(manifest).Contains("appendonly.aof.1.base.aof", StringComparison.Ordinal),
                $"seed {seed}: no rewrite ever completed, so the kills never met one");
        // Nothing an interrupted rewrite left is still lying around after the restarts.
        Assert.Empty(Directory.GetFiles(dir.AppendDirectory, "temp-*"));
        var check = ExternalTool.Run("redis-check-aof", "redis-tools", [manifest]);
        Assert.True(check.ExitCode == 0 && check.StandardOutput.Contains("All AOF files and manifest are valid", StringComparison.Ordinal),
            $"seed {seed}: redis-check-aof rejected the files (exit {check.ExitCode}):\n{check.StandardOutput}{check.StandardError}");
    }

    /// <summary>Starts rewrite after rewrite until the connection drops with the server.</summary>
    private static void RewriteUntilKilled(int port, ManualResetEventSlim start)
    {
        try
        {
            using var c = new RespClient(port);
            start.Wait();
            while (true)
            {
                var reply = c.Call("BGREWRITEAOF");
                if (reply.IsError && reply.Text != "ERR Background append only file rewriting already in progress")
                    throw new InvalidOperationException($"BGREWRITEAOF failed: {reply}");
                Thread.Sleep(5);
            }
        }
        catch (Exception ex) when (ex is IOException or SocketException or ObjectDisposedException)
        {
            // The kill closed the connection: this is how the loop ends.
        }
    }

    private static ServerProcess StartServer(TempDirectory dir, string fsync)
        => ServerProcess.Start("--appendonly", "yes", "--appendfsync", fsync, "--dir", dir.Path);

    private static string CounterKey(int writer) => $"crash:counter:{writer}";

    /// <summary>
    /// One client that pipelines batches of SETs of fresh keys plus an INCR of its counter, and
    /// records which of them were acknowledged, until the connection drops.
    /// </summary>
    private sealed class Writer(int port, int round, int index)
    {
        public int Index => index;
        public List<(string Key, string Value)> AcknowledgedSets { get; } = [];
        /// <summary>AcknowledgedSets.Count, safe to read from the thread that decides when to kill.</summary>
        public int AcknowledgedCount;
        /// <summary>Sent, reply never read: each may or may not have become durable.</summary>
        public List<(string Key, string Value)> UnacknowledgedSets { get; } = [];
        public long? LastIncrReply { get; private set; }
        public int UnacknowledgedIncrs { get; private set; }
        public string? Failure { get; private set; }

        public void Run(ManualResetEventSlim start)
        {
            RespClient client;
            try
            {
                client = new RespClient(port);
            }
            catch (SocketException ex)
            {
                Failure = $"could not connect before the kill: {ex.Message}";
                return;
            }
            using (client)
            {
                start.Wait();
                var batch = new (string Key, string Value)[SetsPerBatch];
                for (int sequence = 0; ; sequence++)
                {
                    var commands = new string[SetsPerBatch + 1][];
                    for (int i = 0; i < SetsPerBatch; i++)
                    {
                        string key = $"crash:{round}:{index}:{sequence}:{i}";
                        batch[i] = (key, $"value of {key} {new string((char)('a' + (sequence + i) % 26), 40 + sequence % 50)}");
                        commands[i] = ["SET", batch[i].Key, batch[i].Value];
                    }
                    commands[SetsPerBatch] = ["INCR", CounterKey(index)];
                    int read = 0;
                    try
                    {
                        client.SendRaw(RespClient.EncodeAll(commands));
                        for (; read < SetsPerBatch; read++)
                        {
                            var reply = client.Read();
                            if (reply.Kind != '+' || reply.Text != "OK")
                            {
                                Failure = $"SET {batch[read].Key} got {reply}";
                                return;
                            }
                            AcknowledgedSets.Add(batch[read]);
                            Interlocked.Increment(ref AcknowledgedCount);
                        }
                        var incr = client.Read();
                        if (incr.Kind != ':')
                        {
                            Failure = $"INCR {CounterKey(index)} got {incr}";
                            return;
                        }
                        if (LastIncrReply is { } previous && incr.Integer != previous + 1)
                        {
                            Failure = $"INCR {CounterKey(index)} went from {previous} to {incr.Integer}; only this writer increments it";
                            return;
                        }
                        LastIncrReply = incr.Integer;
                    }
                    catch (Exception ex) when (ex is IOException or SocketException or ObjectDisposedException)
                    {
                        // The kill: whatever was sent and not answered may or may not have been made durable.
                        for (int i = read; i < SetsPerBatch; i++)
                            UnacknowledgedSets.Add(batch[i]);
                        UnacknowledgedIncrs = 1;
                        return;
                    }
                }
            }
        }
    }

    /// <summary>What the dataset must hold after a restart, accumulated over the rounds.</summary>
    private sealed class Expectation(int seed)
    {
        private readonly Dictionary<string, string> _acknowledged = new(StringComparer.Ordinal);
        private readonly Dictionary<string, string> _uncertain = new(StringComparer.Ordinal);
        private readonly long[] _counterFloor = new long[Writers];
        private readonly long[] _counterSlack = new long[Writers];

        public void Add(Writer writer)
        {
            foreach (var (key, value) in writer.AcknowledgedSets)
                _acknowledged.Add(key, value);
            foreach (var (key, value) in writer.UnacknowledgedSets)
                _uncertain.Add(key, value);
            if (writer.LastIncrReply is { } last)
            {
                Assert.True(last >= _counterFloor[writer.Index], $"seed {seed}: INCR {CounterKey(writer.Index)} replied {last}, below the {_counterFloor[writer.Index]} already durable");
                _counterFloor[writer.Index] = last;
            }
            _counterSlack[writer.Index] += writer.UnacknowledgedIncrs;
        }

        /// <summary>
        /// Checks the restarted server, then takes what it holds as the new truth: an uncertain
        /// write that survived is durable now, one that did not is gone for good.
        /// </summary>
        public string Verify(ServerProcess server, string when)
        {
            using var c = server.Connect();
            var problems = new System.Text.StringBuilder();

            var keys = _acknowledged.Keys.ToList();
            var replies = Pipeline.Run(c, keys.Select(k => new[] { "GET", k }));
            int lost = 0;
            for (int i = 0; i < keys.Count; i++)
            {
                if (replies[i].IsNull)
                {
                    if (++lost <= 20)
                        problems.AppendLine($"acknowledged {keys[i]} is missing");
                }
                else if (replies[i].Text != _acknowledged[keys[i]])
                    problems.AppendLine($"acknowledged {keys[i]} = {replies[i]}, expected \"{_acknowledged[keys[i]]}\"");
            }
            if (lost > 0)
                problems.AppendLine($"{lost} of {keys.Count} acknowledged SETs lost");

            var uncertain = _uncertain.Keys.ToList();
            var uncertainReplies = Pipeline.Run(c, uncertain.Select(k => new[] { "GET", k }));
            int survivors = 0;
            for (int i = 0; i < uncertain.Count; i++)
            {
                if (uncertainReplies[i].IsNull)
                    continue;
                if (uncertainReplies[i].Text != _uncertain[uncertain[i]])
                    problems.AppendLine($"unacknowledged {uncertain[i]} = {uncertainReplies[i]}, expected absent or \"{_uncertain[uncertain[i]]}\"");
                _acknowledged.Add(uncertain[i], _uncertain[uncertain[i]]);
                survivors++;
            }
            _uncertain.Clear();

            int counters = 0;
            for (int t = 0; t < Writers; t++)
            {
                var reply = c.Call("GET", CounterKey(t));
                long value = reply.IsNull ? 0 : long.Parse(reply.Text!);
                counters += reply.IsNull ? 0 : 1;
                long floor = _counterFloor[t], ceiling = floor + _counterSlack[t];
                if (value < floor || value > ceiling)
                    problems.AppendLine($"{CounterKey(t)} = {value}, expected {floor}..{ceiling} (last acknowledged INCR {floor}, {_counterSlack[t]} unanswered)");
                _counterFloor[t] = value;
                _counterSlack[t] = 0;
            }

            long size = c.Call("DBSIZE").Integer;
            long expectedSize = _acknowledged.Count + counters;
            if (size != expectedSize)
                problems.AppendLine($"DBSIZE {size}, expected {expectedSize} ({_acknowledged.Count} SET keys incl. {survivors} unacknowledged survivors, {counters} counters)");

            Assert.True(problems.Length == 0, $"seed {seed}, {when}:\n{problems}\nserver log:\n{server.Output}");
            return $"{when}: all {_acknowledged.Count - survivors} acknowledged SETs there, {survivors} of {uncertain.Count} unanswered ones durable, counters {string.Join(", ", _counterFloor)}";
        }
    }
}
