using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The hot-thread rule fired by a real bottleneck: one shard executor running expensive KEYS
/// scans back to back. It runs alone (a collection without parallelism) because the rule looks
/// for a thread at 90% of a core for 10 s, which other tests competing for the two cores of a
/// CI machine would deny it.
/// </summary>
[Collection(QuietMachineCollection.Name)]
public sealed class DoctorHotThreadTests
{
    [Fact]
    public void ShardExecutorBusyWithScansIsASaturatedThread()
    {
        using var server = ServerProcess.Start("--execution-mode", "executor", "--shards", "1");
        using (var c = server.Connect())
        {
            var sets = new string[30_000][];
            for (int i = 0; i < sets.Length; i++)
                sets[i] = ["SET", "scan:" + i, "v"];
            c.SendRaw(RespClient.EncodeAll(sets));
            for (int i = 0; i < sets.Length; i++)
                RespAssert.Ok(c.Read());
        }
        DoctorProbe.AssertAbsent(server, "hot-thread");

        // Each KEYS walks all 30,000 keys with a pattern that matches none: milliseconds of CPU
        // on the executor per call, and one client keeps it busy back to back.
        using (BackgroundLoad.Command(server.Port, 1, "KEYS", "*x*y*z*"))
        {
            var finding = DoctorProbe.Expect(server, "hot-thread", timeoutMs: 40_000);
            Assert.Equal("cpu", finding.Area);
            Assert.Contains("shard executor 0", finding.Title);
            Assert.Contains("Spread hot keys", finding.Advice);
            Assert.True(int.Parse(finding.Evidence["cpu_percent_avg"]) >= 90, finding.Seen);
            Assert.Equal(MetricNames.CpuProcessPercent, finding.Chart);
        }
    }
}
