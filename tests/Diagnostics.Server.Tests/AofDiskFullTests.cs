using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// A disk that fills up under the AOF, on a 4 MB tmpfs the test mounts for itself: writes are
/// refused with MISCONF and the system's reason, reads and new connections go on, INFO says what
/// failed, and once space is freed the server resumes by itself. After a restart every write that
/// was acknowledged is there and none that was refused. Mounting needs root (CAP_SYS_ADMIN), which
/// the test machines and CI have; without it the test fails, saying so.
/// </summary>
public sealed class AofDiskFullTests : IDisposable
{
    private const int ValueBytes = 8 * 1024;
    private const int FillerBytes = 1536 * 1024;
    // 4 MB of disk holds about 500 values of 8 KB: reaching this many means the disk never filled.
    private const int MaxWrites = 1000;
    private const string DiskFullError = "MISCONF Errors writing to the AOF file: No space left on device";

    private readonly TmpfsMount _mountPoint = new("4m", "aof-disk-full-");

    [Theory]
    [InlineData("always")]
    [InlineData("everysec")]
    public void FullDiskRefusesWritesServesReadsAndRecovers(string fsync)
    {
        string dir = _mountPoint.Path;
        // The server's own files fill the disk; the filler is the room the test can give back.
        string filler = Path.Combine(dir, "filler");
        File.WriteAllBytes(filler, Enumerable.Repeat((byte)'f', FillerBytes).ToArray());

        var acknowledged = new List<int>();
        var afterRecovery = new List<string>();
        var refused = new List<string>();
        using (var server = StartServer(dir, fsync))
        {
            // Transactions queued while the disk still worked: on the full disk an EXEC of a write
            // is refused whole (Redis's EXECABORT with the MISCONF reason), an EXEC of reads runs.
            using var writeTransaction = server.Connect();
            using var readTransaction = server.Connect();
            RespAssert.Ok(writeTransaction.Call("MULTI"));
            RespAssert.Simple("QUEUED", writeTransaction.Call("SET", "full:transaction", "x"));
            RespAssert.Ok(readTransaction.Call("MULTI"));
            RespAssert.Simple("QUEUED", readTransaction.Call("EXISTS", "full:transaction"));

            var writer = new Filler(server.Port, acknowledged);
            var writerThread = new Thread(writer.Run) { IsBackground = true, Name = "aof disk filler" };
            writerThread.Start();

            using var probe = server.Connect();
            WaitUntil(server, () => !writerThread.IsAlive || Ask(server, probe, "INFO persistence during the fill", () => Status(probe)) == "err",
                "the disk filled up (aof_last_write_status:err)", timeoutMs: 60_000);
            Assert.True(writer.Failure is null, $"the writer failed: {writer.Failure}\n{server.Output}");
            Assert.True(writerThread.IsAlive || writer.Refusal is not null,
                $"{MaxWrites} writes of {ValueBytes} bytes fit on a 4 MB disk; the AOF did not fill it:\n{server.Output}");

            var misconf = Ask(server, probe, "a write on the full disk", () => probe.Call("SET", "full:probe", "x"));
            RespAssert.ErrorStartsWith(DiskFullError, misconf);
            refused.Add("full:probe");

            // The write whose bytes hit the full disk was executed, but its reply waits until those
            // bytes are written (everysec) or durable (always): the writer is still waiting for it.
            Thread.Sleep(300);
            Assert.True(writerThread.IsAlive, $"under appendfsync {fsync} a write was answered ({writer.Refusal}) while its bytes could not be written");

            var info = Ask(server, probe, "INFO persistence on the full disk", () => InfoFields.Read(probe, "persistence"));
            Assert.Equal("err", info["aof_last_write_status"]);
            Assert.Contains("No space left on device", info["aof_last_write_error"]);

            int earliest, latest;
            lock (acknowledged)
            {
                Assert.True(acknowledged.Count > 0, "the disk was full before any write was acknowledged");
                earliest = acknowledged[0];
                latest = acknowledged[^1];
            }
            RespAssert.Bulk(Value(earliest), Ask(server, probe, "a read on the full disk", () => probe.Call("GET", Key(earliest))));
            RespAssert.Bulk(Value(latest), Ask(server, probe, "a read on the full disk", () => probe.Call("GET", Key(latest))));
            // As Redis 7's processCommand: PING fails with MISCONF too, so health checks notice; a
            // new client still connects and reads.
            using (var other = server.Connect())
            {
                RespAssert.ErrorStartsWith(DiskFullError, Ask(server, other, "PING from a new client on the full disk", () => other.Call("PING")));
                RespAssert.Bulk(Value(earliest), Ask(server, other, "a read from a new client on the full disk", () => other.Call("GET", Key(earliest))));
            }
            RespAssert.ErrorStartsWith("EXECABORT Transaction discarded because of: " + DiskFullError,
                Ask(server, writeTransaction, "EXEC of a queued write on the full disk", () => writeTransaction.Call("EXEC")));
            refused.Add("full:transaction");
            var reads = Ask(server, readTransaction, "EXEC of a queued read on the full disk", () => readTransaction.Call("EXEC"));
            Assert.True(reads.IsArray && reads.Array.Count == 1 && reads.Array[0].Integer == 0, $"EXEC of EXISTS on the full disk answered {reads}");
            RespAssert.ErrorStartsWith(DiskFullError, Ask(server, probe, "a second write on the full disk", () => probe.Call("INCR", "full:counter")));
            refused.Add("full:counter");

            // Several retries on the still-full disk, as an operator takes a while to free space:
            // each must leave the kept writes as they were, neither lost nor doubled.
            Thread.Sleep(2500);
            RespAssert.ErrorStartsWith(DiskFullError, Ask(server, probe, "a write after retries on the full disk", () => probe.Call("SET", "full:late", "x")));
            refused.Add("full:late");

            writer.Stop();
            File.Delete(filler);
            WaitUntil(server, () => Status(probe) == "ok", "the server noticed the freed space (aof_last_write_status:ok)", timeoutMs: 15_000);
            Assert.Equal("", InfoFields.Get(probe, "persistence", "aof_last_write_error"));
            Assert.True(writerThread.Join(TimeSpan.FromSeconds(10)), "the writer's held write was not answered after the disk recovered");
            Assert.True(writer.Failure is null, $"the writer failed: {writer.Failure}");
            Assert.True(writer.Refusal is null, $"the write held under appendfsync {fsync} was refused after being executed: {writer.Refusal}");

            for (int i = 0; i < 10; i++)
            {
                string key = $"after:{i}";
                RespAssert.Ok(probe.Call("SET", key, $"recovered {i}"));
                afterRecovery.Add(key);
            }
            RespAssert.Integer(1, probe.Call("INCR", "after:counter"));
            afterRecovery.Add("after:counter");

            probe.Send("SHUTDOWN");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)), $"SHUTDOWN did not stop the server:\n{server.Output}");
        }

        AssertLoggedOnce(dir, acknowledged);

        using (var server = StartServer(dir, fsync))
        using (var c = server.Connect())
        {
            Assert.Contains("DB loaded from append only file", server.Output);
            var keys = acknowledged.Select(Key).ToList();
            var replies = Pipeline.Run(c, keys.Select(k => new[] { "GET", k }));
            for (int i = 0; i < keys.Count; i++)
                Assert.True(replies[i].Text == Value(acknowledged[i]), $"acknowledged {keys[i]} came back as {Shorten(replies[i])} after the restart");
            for (int i = 0; i < 10; i++)
                RespAssert.Bulk($"recovered {i}", c.Call("GET", $"after:{i}"));
            RespAssert.Bulk("1", c.Call("GET", "after:counter"));
            foreach (var key in refused)
                Assert.True(c.Call("EXISTS", key).Integer == 0, $"refused {key} exists after the restart");
            RespAssert.Integer(acknowledged.Count + afterRecovery.Count, c.Call("DBSIZE"));
        }
    }

    /// <summary>
    /// Every acknowledged write is in the AOF exactly once: the retries after a failed write must
    /// not write the kept bytes twice (harmless for SET, an INCR applied twice for counters).
    /// </summary>
    private static void AssertLoggedOnce(string dir, List<int> acknowledged)
    {
        var text = new System.Text.StringBuilder();
        foreach (var file in Directory.GetFiles(Path.Combine(dir, "appendonlydir"), "*.aof").Order())
            text.Append(File.ReadAllText(file));
        var counts = new Dictionary<string, int>(StringComparer.Ordinal);
        foreach (System.Text.RegularExpressions.Match match in System.Text.RegularExpressions.Regex.Matches(text.ToString(), @"\r\nSET\r\n\$\d+\r\n(full:\d+)\r\n"))
            counts[match.Groups[1].Value] = counts.GetValueOrDefault(match.Groups[1].Value) + 1;
        var problems = new System.Text.StringBuilder();
        foreach (int i in acknowledged)
        {
            int count = counts.GetValueOrDefault(Key(i));
            if (count != 1)
                problems.Append($"{Key(i)} x{count}, ");
        }
        Assert.True(problems.Length == 0, $"acknowledged writes not logged exactly once ({text.Length} bytes of AOF): {problems}");
    }

    private static ServerProcess StartServer(string dir, string fsync)
        => ServerProcess.Start("--appendonly", "yes", "--appendfsync", fsync, "--dir", dir);

    private static string Status(RespClient client) => InfoFields.Get(client, "persistence", "aof_last_write_status");

    private static string Key(int i) => $"full:{i}";

    private static string Value(int i)
    {
        string prefix = $"{i}:";
        return prefix + new string((char)('a' + i % 26), ValueBytes - prefix.Length);
    }

    private static string Shorten(RespValue reply) => reply.IsNull ? "(nil)" : reply.ToString()[..Math.Min(40, reply.ToString().Length)] + "...";

    private static void WaitUntil(ServerProcess server, Func<bool> condition, string what, int timeoutMs)
    {
        var deadline = DateTime.UtcNow.AddMilliseconds(timeoutMs);
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
                Assert.Fail($"timed out after {timeoutMs} ms waiting until {what}. Server log:\n{server.Output}");
            Thread.Sleep(20);
        }
    }

    /// <summary>A request that must be answered while the disk is full; a hang fails with what was asked.</summary>
    private static T Ask<T>(ServerProcess server, RespClient client, string what, Func<T> request)
    {
        try
        {
            return request();
        }
        catch (IOException ex)
        {
            Assert.Fail($"no answer to {what} ({ex.Message}): the server must keep serving while the disk is full.\n{server.Output}");
            throw;
        }
    }

    /// <summary>One client writing 8 KB values until the server refuses one (or the test stops it).</summary>
    private sealed class Filler(int port, List<int> acknowledged)
    {
        private volatile bool _stop;

        public RespValue? Refusal { get; private set; }
        public int RefusedIndex { get; private set; } = -1;
        public string? Failure { get; private set; }

        public void Stop() => _stop = true;

        public void Run()
        {
            try
            {
                using var client = new RespClient(port);
                for (int i = 0; i < MaxWrites && !_stop; i++)
                {
                    var reply = client.Call("SET", Key(i), Value(i));
                    if (reply.Kind == '+' && reply.Text == "OK")
                    {
                        lock (acknowledged)
                            acknowledged.Add(i);
                        continue;
                    }
                    Refusal = reply;
                    RefusedIndex = i;
                    return;
                }
            }
            catch (Exception ex)
            {
                Failure = ex.ToString();
            }
        }
    }

    public void Dispose() => _mountPoint.Dispose();
}
