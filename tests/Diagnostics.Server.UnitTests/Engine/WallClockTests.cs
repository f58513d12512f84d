using System.Diagnostics;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The clock commands expire keys against, derived from their latency timestamp, and the coarse
/// one idle times use: both must agree with the wall clock, across recalibrations.
/// </summary>
public sealed class WallClockTests
{
    [Fact]
    public void DerivedTimesStayWithinAFewMillisecondsOfTheWallClockAcrossRecalibrations()
    {
        for (int i = 0; i < 6; i++)
        {
            long before = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
            long derived = WallClock.UnixMs(Stopwatch.GetTimestamp());
            long coarse = WallClock.CoarseUnixMs();
            long after = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
            Assert.InRange(derived, before - 2, after + 2);
            // The coarse tick advances every few milliseconds (the kernel's jiffy).
            Assert.InRange(coarse, before - 20, after + 20);
            Thread.Sleep(60); // past the 100 ms recalibration every other turn
        }
    }

    [Fact]
    public void ATimestampTakenEarlierReadsEarlier()
    {
        long earlier = Stopwatch.GetTimestamp();
        Thread.Sleep(250);
        long later = Stopwatch.GetTimestamp();
        long difference = WallClock.UnixMs(later) - WallClock.UnixMs(earlier);
        double elapsed = Stopwatch.GetElapsedTime(earlier, later).TotalMilliseconds;
        Assert.InRange(difference, elapsed - 2, elapsed + 2);
    }
}
