using System.Diagnostics;
using System.Globalization;
using Diagnostics.Contracts;
using Diagnostics.Monitor.Runtime;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Monitor;

/// <summary>
/// The monitor's EventPipe source on its own, attached to a real server process: GC pauses and
/// allocation ticks arrive from a garbage-heavy load, the session ends on Dispose, and a process
/// that cannot be traced, a server that dies and one that freezes show as failed or stopped
/// rather than throwing or hanging. Then the aggregator fed by hand, for the sequences a live
/// load does not make on demand (background GCs, bounds).
/// </summary>
// The garbage-heavy load on a 64 KB young generation keeps the cores busy (as DoctorRuntimeTests' does).
[Collection(QuietMachineCollection.Name)]
public sealed class EventPipeRuntimeSourceTests
{
    private static readonly TimeSpan OneSecond = TimeSpan.FromSeconds(1);

    [Fact]
    public void GcPausesAndAllocationTicksArriveFromALiveServer()
    {
        // INFO builds its reply as text; with a 64 KB gen0 budget that is hundreds of GCs a second.
        using var server = ServerProcess.StartWithEnvironment(new Dictionary<string, string> { ["DOTNET_GCgen0size"] = "0x10000" });
        long attachedUnixMicros = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() * 1000;
        var source = new EventPipeRuntimeSource(server.Pid);
        try
        {
            source.Start();
            Poll.Until(() => source.Report(OneSecond).State != "starting", "the session to open", 15_000);
            Assert.Equal("running", source.Report(OneSecond).State);

            var pauses = new List<GcPause>();
            var allocations = new List<TypeAllocation>();
            using (BackgroundLoad.Command(server.Port, 2, "INFO", "all"))
            {
                Poll.Until(() =>
                {
                    RuntimeInterval interval = source.Aggregator.Cut();
                    pauses.AddRange(interval.GcPauses);
                    allocations.AddRange(interval.Allocations);
                    return pauses.Count(p => p.PauseMicros > 0) >= 5 && allocations.Any(a => a.TypeName != "(unknown type)");
                }, $"GC pauses and named allocation ticks (so far {pauses.Count} pauses, {allocations.Count} allocations; state {source.Report(OneSecond).State})", 30_000);
            }

            long nowUnixMicros = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() * 1000;
            Assert.All(pauses, pause =>
            {
                Assert.InRange(pause.Generation, 0, 2);
                Assert.True(pause.Number > 0, $"GC number {pause.Number}");
                Assert.NotEmpty(pause.Reason);
                Assert.NotEmpty(pause.Type);
                Assert.InRange(pause.PauseMicros, 0, 10_000_000);
                // Wall clock, a little slack for clock granularity.
                Assert.InRange(pause.StartUnixMicros, attachedUnixMicros - 1_000_000, nowUnixMicros + 1_000_000);
            });
            Assert.All(allocations, allocation => Assert.True(allocation.Bytes > 0 && allocation.Ticks > 0 && allocation.TypeName.Length > 0, allocation.ToString()));

            MonitorSourceStatus status = source.Report(OneSecond);
            Assert.Equal("eventpipe", status.Name);
            Assert.Equal("running", status.State);
            Assert.True(status.TotalEvents > 0, "no events counted");
            Assert.Equal(0, status.DroppedAtSource);
            Assert.Contains(server.Pid.ToString(CultureInfo.InvariantCulture), status.Detail);

            var clock = Stopwatch.StartNew();
            source.Dispose();
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(10), $"Dispose took {clock.Elapsed}");
            Assert.Equal("stopped", source.Report(OneSecond).State);
            Assert.False(server.HasExited, "the server exited when the session ended:\n" + server.Output);
        }
        finally
        {
            source.Dispose();
        }
    }

    [Fact]
    public void AServerThatDiesReportsTheBrokenStream()
    {
        using var server = ServerProcess.Start();
        using var source = new EventPipeRuntimeSource(server.Pid);
        source.Start();
        Poll.Until(() => source.Report(OneSecond).State != "starting", "the session to open", 15_000);
        Assert.Equal("running", source.Report(OneSecond).State);

        server.KillHard();
        Poll.Until(() => source.Report(OneSecond).State.StartsWith("failed: ", StringComparison.Ordinal), "the source to see the stream end", 15_000);
        var clock = Stopwatch.StartNew();
        source.Dispose();
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(5), $"Dispose took {clock.Elapsed}");
    }

    [Fact]
    public void AFrozenServerDoesNotHangDispose()
    {
        using var server = ServerProcess.Start();
        using var source = new EventPipeRuntimeSource(server.Pid);
        source.Start();
        Poll.Until(() => source.Report(OneSecond).State != "starting", "the session to open", 15_000);
        Assert.Equal("running", source.Report(OneSecond).State);
        // SIGSTOP: the server neither answers the stop command nor ends the stream.
        Signal(server.Pid, "-STOP");
        try
        {
            var clock = Stopwatch.StartNew();
            source.Dispose();
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(10), $"Dispose took {clock.Elapsed}");
            Assert.Equal("stopped", source.Report(OneSecond).State);
        }
        finally
        {
            Signal(server.Pid, "-CONT");
        }
    }

    private static void Signal(int pid, string signal)
    {
        using var kill = Process.Start("kill", [signal, pid.ToString(CultureInfo.InvariantCulture)])!;
        kill.WaitForExit();
    }

    [Fact]
    public void AProcessThatIsNotDotNetReportsFailedWithoutThrowingOrHanging()
    {
        using var sleep = Process.Start(new ProcessStartInfo("sleep", "30") { UseShellExecute = false })!;
        try
        {
            using var source = new EventPipeRuntimeSource(sleep.Id);
            var clock = Stopwatch.StartNew();
            source.Start();
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(2), $"Start took {clock.Elapsed}");

            Poll.Until(() => source.Report(OneSecond).State.StartsWith("failed: ", StringComparison.Ordinal), "the source to report its failure", 15_000);
            MonitorSourceStatus status = source.Report(OneSecond);
            Assert.Contains(sleep.Id.ToString(CultureInfo.InvariantCulture), status.State);
            Assert.Contains(".NET", status.State);
            Assert.Equal(0, status.TotalEvents);

            clock.Restart();
            source.Dispose();
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(2), $"Dispose took {clock.Elapsed}");
            Assert.StartsWith("failed: ", source.Report(OneSecond).State);
        }
        finally
        {
            sleep.Kill();
            sleep.WaitForExit(5000);
        }
    }

    [Fact]
    public void ABackgroundGcPausesForItsStartAndItsFinalMark()
    {
        // The sequence a background GC makes (seen in a trace): suspended for a GC, GCStart of
        // the background GC, restart; later suspended for its final mark with no GCStart, restart;
        // GCStop. A blocking gen0 GC in between is charged its own suspension only.
        var aggregator = new RuntimeAggregator();
        aggregator.SuspendStarted(1_000, forGc: true);
        aggregator.CollectionStarted(1_030, 44, 2, "InducedNotForced", "BackgroundGC", background: true);
        aggregator.Restarted(1_100);
        aggregator.SuspendStarted(2_000, forGc: true);
        aggregator.CollectionStarted(2_010, 45, 0, "AllocSmall", "NonConcurrentGC", background: false);
        aggregator.CollectionEnded(45);
        aggregator.Restarted(2_500);
        Assert.Equal(new[] { new GcPause(2_000, 45, 0, "AllocSmall", "NonConcurrentGC", 500) }, aggregator.Cut().GcPauses);

        aggregator.SuspendStarted(4_000, forGc: false); // a debugger, say: not the GC's pause
        aggregator.Restarted(4_300);
        aggregator.SuspendStarted(5_000, forGc: true);
        aggregator.Restarted(5_080);
        aggregator.CollectionEnded(44);
        Assert.Equal(new[] { new GcPause(1_000, 44, 2, "InducedNotForced", "BackgroundGC", 180) }, aggregator.Cut().GcPauses);
        Assert.Empty(aggregator.Cut().GcPauses);
    }

    [Fact]
    public void TypesPastTheBoundAreSummedTogetherAndMessagesAreCut()
    {
        var aggregator = new RuntimeAggregator();
        for (int i = 0; i < RuntimeAggregator.TypesKept + 5; i++)
            aggregator.Allocated("Type" + i.ToString(CultureInfo.InvariantCulture), 100_000);
        aggregator.Allocated("Type0", 100_000);
        aggregator.ExceptionThrown("System.IO.IOException", "short");
        aggregator.ExceptionThrown("System.IO.IOException", new string('x', 500));
        aggregator.ThreadPoolAdjusted(4);
        aggregator.ThreadPoolAdjusted(6);
        aggregator.Contended(1_500_000);

        RuntimeInterval interval = aggregator.Cut();
        Assert.Equal(RuntimeAggregator.TypesKept + 1, interval.Allocations.Count);
        Assert.Equal(new TypeAllocation(RuntimeAggregator.OtherTypes, 500_000, 5), interval.Allocations.Single(a => a.TypeName == RuntimeAggregator.OtherTypes));
        Assert.Contains(new TypeAllocation("Type0", 200_000, 2), interval.Allocations);
        Assert.Equal(RuntimeAggregator.OtherTypes, interval.Allocations[0].TypeName); // the largest first
        ExceptionCount exception = Assert.Single(interval.Exceptions);
        Assert.Equal(2, exception.Count);
        Assert.Equal(RuntimeAggregator.MessageLength, exception.LastMessage.Length);
        Assert.Equal((6, 2L), (interval.ThreadPoolWorkers, interval.ThreadPoolAdjustments));
        Assert.Equal((1L, 1_500L), (interval.Contentions, interval.ContentionMicros));

        RuntimeInterval next = aggregator.Cut();
        Assert.Empty(next.Allocations);
        Assert.Equal(-1, next.ThreadPoolWorkers);
    }
}
