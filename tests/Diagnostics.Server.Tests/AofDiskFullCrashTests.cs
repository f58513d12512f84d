using Diagnostics.Server.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Diagnostics.Server.Tests;

/// <summary>
/// A crash while the disk is full loses no acknowledged write. Pipelining writers fill a 16 MB
/// tmpfs under appendfsync everysec until every one of them is refused with MISCONF; the server is
/// then killed with SIGKILL while the disk is still full and restarted on the same files (the disk
/// still full): every write whose reply said OK must be there with its value. Under everysec a
/// reply is sent once its bytes are written to the file, so a failed write must keep the bytes
/// written before it (cutting back only the partial record), not cut the file back to its last
/// fsync. The disk-full event must show in INFO persistence and in INFO diskio's error counts.
/// Mounting the tmpfs needs root; without it the test fails, saying so.
/// </summary>
public sealed class AofDiskFullCrashTests(ITestOutputHelper output) : IDisposable
{
    private const int Writers = 4;
    private const int BatchSize = 20;
    private const int ValueBytes = 1024;
    // 16 MB holds about 15,000 writes of 1 KB: reaching this many per writer means it never filled.
    private const int MaxWritesPerWriter = 20_000;

    private readonly TmpfsMount _disk = new("16m", "aof-full-crash-");

    [Fact]
    public void AcknowledgedWritesSurviveKillNineOnAFullDisk()
    {
        string dir = _disk.Path;
        var acknowledged = new List<string>[Writers];
        using (var server = StartServer(dir))
        {
            var writers = new Writer[Writers];
            var threads = new Thread[Writers];
            for (int t = 0; t < Writers; t++)
            {
                acknowledged[t] = [];
                writers[t] = new Writer(server.Port, t, acknowledged[t]);
                threads[t] = new Thread(writers[t].Run) { IsBackground = true, Name = $"aof full-disk writer {t}" };
                threads[t].Start();
            }
            using var probe = server.Connect();
            Poll.Until(() => Status(probe) == "err" || threads.All(t => !t.IsAlive),
                () => $"the disk never filled (aof_last_write_status stayed ok):\n{server.Output}", timeoutMs: 120_000);
            RespAssert.ErrorStartsWith("MISCONF", probe.Call("SET", "probe", "x"));
            // The writes whose bytes hit the full disk stay unanswered (their bytes are not written);
            // the others are refused. Once no reply has come for a while, every answer is in.
            int settled = 0, last = -1;
            while (settled < 20)
            {
                Thread.Sleep(100);
                int now = Count(acknowledged);
                settled = now == last ? settled + 1 : 0;
                last = now;
            }
            for (int t = 0; t < Writers; t++)
                Assert.True(writers[t].Failure is null, $"writer {t} failed: {writers[t].Failure}\n{server.Output}");

            var persistence = InfoFields.Read(probe, "persistence");
            Assert.Equal("err", persistence["aof_last_write_status"]);
            Assert.Contains("No space left on device", persistence["aof_last_write_error"]);
            var aofWrite = InfoFields.Parts(InfoFields.Get(probe, "diskio", "io_aof_write"));
            Assert.True(long.Parse(aofWrite["errors"]) > 0, $"INFO diskio counted no failed AOF write: io_aof_write {string.Join(',', aofWrite)}");

            // A crash while the disk is still full: nothing gets a chance to flush or sync.
            foreach (var writer in writers)
                writer.Stop();
            server.KillHard();
            foreach (var thread in threads)
                Assert.True(thread.Join(TimeSpan.FromSeconds(30)), "a writer did not notice the kill");
        }

        int total = Count(acknowledged);
        Assert.True(total > 0, "the disk was full before any write was acknowledged");

        using (var server = StartServer(dir))
        using (var c = server.Connect())
        {
            Assert.Contains("DB loaded from append only file", server.Output);
            var keys = acknowledged.SelectMany(list => list).ToList();
            var replies = Pipeline.Run(c, keys.Select(k => new[] { "GET", k }));
            var lost = new List<string>();
            for (int i = 0; i < keys.Count; i++)
                if (replies[i].IsNull || replies[i].Text != Value(keys[i]))
                    lost.Add(keys[i]);
            output.WriteLine($"acknowledged writes: {total}, lost after kill -9 on the full disk: {lost.Count}");
            Assert.True(lost.Count == 0,
                $"{lost.Count} of {total} acknowledged writes lost after kill -9 on the full disk, e.g. {string.Join(", ", lost.Take(5))}\n{server.Output}");
        }
    }

    private static int Count(List<string>[] acknowledged)
    {
        int total = 0;
        foreach (var list in acknowledged)
            lock (list)
                total += list.Count;
        return total;
    }

    private static string Status(RespClient client) => InfoFields.Get(client, "persistence", "aof_last_write_status");

    private static ServerProcess StartServer(string dir)
        => ServerProcess.Start("--appendonly", "yes", "--appendfsync", "everysec", "--dir", dir);

    private static string Value(string key) => key + ":" + new string((char)('a' + key.Length % 26), ValueBytes - key.Length - 1);

    /// <summary>
    /// Pipelines batches of SETs until the server refuses one (an OK in a batch counts even if a
    /// later one was refused) or the server is killed while it holds a reply.
    /// </summary>
    private sealed class Writer(int port, int id, List<string> acknowledged)
    {
        private volatile bool _stopping;

        public RespValue? Refusal { get; private set; }
        public string? Failure { get; private set; }

        public void Stop() => _stopping = true;

        public void Run()
        {
            try
            {
                using var client = new RespClient(port);
                for (int start = 0; start < MaxWritesPerWriter; start += BatchSize)
                {
                    var keys = Enumerable.Range(start, BatchSize).Select(i => $"w{id}:{i}").ToArray();
                    var replies = Pipeline.Run(client, keys.Select(k => new[] { "SET", k, Value(k) }));
                    for (int i = 0; i < keys.Length; i++)
                    {
                        if (replies[i].Kind == '+' && replies[i].Text == "OK")
                        {
                            lock (acknowledged)
                                acknowledged.Add(keys[i]);
                        }
                        else
                            Refusal ??= replies[i];
                    }
                    if (Refusal is not null)
                        return;
                }
            }
            catch (Exception ex) when (!_stopping)
            {
                Failure = ex.ToString();
            }
            catch (IOException)
            {
                // The kill cut off a reply the server was still holding: that write was never acknowledged.
            }
        }
    }

    public void Dispose() => _disk.Dispose();
}
