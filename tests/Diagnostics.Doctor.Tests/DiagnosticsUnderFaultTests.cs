using System.Diagnostics;
using System.IO.Compression;
using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The operator opens the API exactly when the server struggles: with the thread pool starved and
/// with KEYS holding the keyspace back to back, every API call still answers within a second and
/// a debug package within a few, because HTTP runs on the diagnostics lane's own threads.
/// </summary>
[Collection(QuietMachineCollection.Name)]
public sealed class DiagnosticsUnderFaultTests
{
    private static readonly string[] Paths =
    [
        "/api/runtime", "/api/info", "/api/doctor", "/api/clients", "/api/inflight", "/api/threads",
        "/api/history?seconds=10", "/api/keyspace", "/api/slowlog", "/api/latency", "/api/memory", "/metrics",
    ];

    [Fact]
    public void TheApiAnswersWithinASecondWhileThePoolStarves()
    {
        using var server = ServerProcess.Start(StarvedPool.NoWaitLimit);
        using var api = new ApiClient(server.HttpPort);
        api.GetText("/api/info"); // the connection this client keeps: it is open before the trouble starts
        using (new StarvedPool(server))
        {
            // The pool is starved for real: the doctor sees it (through the same API).
            DoctorProbe.Expect(server, "threadpool-starvation", timeoutMs: 30_000);
            var slowest = CallEveryPath(api, TimeSpan.FromSeconds(8));
            AssertAllWithin(slowest, TimeSpan.FromSeconds(1));
            var (took, zip) = TakePackage(api);
            Assert.True(took < TimeSpan.FromSeconds(4), $"the debug package took {took.TotalMilliseconds:N0} ms under starvation");
            // Its stacks were sampled, not abandoned: the capture runs off the pool.
            string stacks = new StreamReader(zip.GetEntry("stacks.txt")!.Open()).ReadToEnd();
            Assert.Contains("resolved with TraceEvent", stacks);
            Assert.DoesNotContain("# Fallback:", stacks);
        }
    }

    [Fact]
    public void TheApiAnswersWithinASecondWhileKeysHoldsTheKeyspace()
    {
        using var server = ServerProcess.Start();
        using (var c = server.Connect())
        {
            var sets = new string[200_000][];
            for (int i = 0; i < sets.Length; i++)
                sets[i] = ["SET", "keys-fault:" + i, "v"];
            c.SendRaw(RespClient.EncodeAll(sets));
            for (int i = 0; i < sets.Length; i++)
                RespAssert.Ok(c.Read());
        }
        using var api = new ApiClient(server.HttpPort);
        // One walk before the fault: what the keyspace report falls back to.
        Assert.Equal(200_000, api.Get("/api/keyspace", ContractsJson.Default.KeyspaceReport).KeysTotal);
        using (BackgroundLoad.Command(server.Port, 3, "KEYS", "*x*y*z*"))
        {
            WaitForKeysRunning(api);
            var slowest = CallEveryPath(api, TimeSpan.FromSeconds(6));
            AssertAllWithin(slowest, TimeSpan.FromSeconds(1));
            // The keyspace walk could not hold the shards: the last walk is shown, saying who holds them.
            var keyspace = Eventually(() => api.Get("/api/keyspace", ContractsJson.Default.KeyspaceReport), r => r.Unavailable is not null,
                "a keyspace report saying the shards were held");
            Assert.Equal(200_000, keyspace.KeysTotal);
            Assert.Contains("the shards were held by a long command", keyspace.Unavailable);
            Assert.Contains("these figures are from the last walk", keyspace.Unavailable);
            var (took, _) = TakePackage(api);
            Assert.True(took < TimeSpan.FromSeconds(4), $"the debug package took {took.TotalMilliseconds:N0} ms while KEYS ran");
        }
    }

    [Fact]
    public async Task AFloodOfPackageRequestsCannotTakeTheApi()
    {
        using var server = ServerProcess.Start();
        using var api = new ApiClient(server.HttpPort);
        api.GetText("/api/info");
        // Eight at once: one is built, four wait their turn, the rest are refused with why.
        var flood = Enumerable.Range(0, 8).Select(_ => api.Http.GetAsync("/api/debug/package")).ToArray();
        // The cheap views answer meanwhile (the expensive ones wait their turn, or are refused too).
        var slowest = CallEveryPath(api, TimeSpan.FromSeconds(2), Paths.Where(p => p is not ("/api/doctor" or "/api/keyspace")).ToArray());
        AssertAllWithin(slowest, TimeSpan.FromSeconds(1));
        var answers = await Task.WhenAll(flood);
        int built = answers.Count(a => a.StatusCode == System.Net.HttpStatusCode.OK);
        var refused = answers.Where(a => a.StatusCode == System.Net.HttpStatusCode.TooManyRequests).ToList();
        Assert.Equal(8, built + refused.Count);
        Assert.InRange(built, 1, 1 + 4);
        Assert.NotEmpty(refused);
        Assert.StartsWith("too many expensive diagnostics requests at once (1 running, 4 waiting): /api/debug/package was refused",
            await refused[0].Content.ReadAsStringAsync());
        foreach (var answer in answers)
            answer.Dispose();
    }

    private static Dictionary<string, TimeSpan> CallEveryPath(ApiClient api, TimeSpan during, string[]? paths = null)
    {
        var slowest = new Dictionary<string, TimeSpan>();
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < during)
        {
            foreach (string path in paths ?? Paths)
            {
                var call = Stopwatch.StartNew();
                api.GetText(path);
                slowest[path] = call.Elapsed > slowest.GetValueOrDefault(path) ? call.Elapsed : slowest[path];
            }
        }
        return slowest;
    }

    private static void AssertAllWithin(Dictionary<string, TimeSpan> slowest, TimeSpan limit)
    {
        var late = slowest.Where(p => p.Value > limit).Select(p => $"{p.Key} {p.Value.TotalMilliseconds:N0} ms").ToList();
        Assert.True(late.Count == 0, "API calls slower than " + limit.TotalSeconds + " s: " + string.Join(", ", late)
            + " (all: " + string.Join(", ", slowest.Select(p => $"{p.Key} {p.Value.TotalMilliseconds:N0} ms")) + ")");
    }

    private static (TimeSpan Took, ZipArchive Zip) TakePackage(ApiClient api)
    {
        var clock = Stopwatch.StartNew();
        byte[] package = api.Http.GetByteArrayAsync("/api/debug/package").GetAwaiter().GetResult();
        return (clock.Elapsed, new ZipArchive(new MemoryStream(package), ZipArchiveMode.Read));
    }

    private static void WaitForKeysRunning(ApiClient api)
        => Eventually(() => api.Get("/api/inflight", ContractsJson.Default.InFlightWorkArray), w => w.Any(x => x.Activity == "keys"), "KEYS in flight");

    private static T Eventually<T>(Func<T> read, Func<T, bool> done, string what)
    {
        var deadline = DateTime.UtcNow.AddSeconds(20);
        T value = read();
        while (!done(value))
        {
            Assert.True(DateTime.UtcNow < deadline, "waited 20 s for " + what);
            Thread.Sleep(100);
            value = read();
        }
        return value;
    }
}
