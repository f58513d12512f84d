using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Tests;

/// <summary>
/// max-waiting-commands refuses waits that have stalled (none ended for StallMs) once the limit is
/// reached, and any past the hard limit; waits that keep ending pass the limit, as ordinary
/// contention does. Time is a clock the test moves.
/// </summary>
public sealed class ShardWaitLimitTests
{
    private sealed class ManualClock : TimeProvider
    {
        private long _ticks;
        public override long TimestampFrequency => TimeSpan.TicksPerSecond;
        public override long GetTimestamp() => Volatile.Read(ref _ticks);
        public void Advance(int milliseconds) => Interlocked.Add(ref _ticks, milliseconds * TimeSpan.TicksPerMillisecond);
    }

    private static void Begin(ShardWaitLimit waits, int count)
    {
        for (int i = 0; i < count; i++)
            Assert.True(waits.TryBeginWait(), $"wait {i + 1} of {count} (waiting {waits.Waiting}, limit {waits.Limit})");
    }

    /// <summary>Runs <paramref name="test"/> on a fresh limit, ending every wait it left (each raised the pool's minimum).</summary>
    private static void With(int limit, Action<ShardWaitLimit, ManualClock> test)
    {
        var clock = new ManualClock();
        var waits = new ShardWaitLimit(clock) { Limit = limit };
        try
        {
            test(waits, clock);
        }
        finally
        {
            while (waits.Waiting > 0)
                waits.EndWait();
        }
    }

    [Fact]
    public void WaitsThatKeepEndingPassTheLimit()
    {
        With(2, (waits, clock) =>
        {
            Begin(waits, 3);
            Assert.False(waits.AtLimit);
            // One ends every half stall: the waits are moving, however many of them there are.
            for (int i = 0; i < 5; i++)
            {
                clock.Advance(ShardWaitLimit.StallMs / 2);
                waits.EndWait();
                Begin(waits, 2);
            }
            Assert.Equal(8, waits.Waiting);
            Assert.Equal(0, waits.Refused);
        });
    }

    [Fact]
    public void OnceNoWaitHasEndedForTheStallTimeTheNextPastTheLimitIsRefused()
    {
        With(2, (waits, clock) =>
        {
            Begin(waits, 2);
            clock.Advance(ShardWaitLimit.StallMs - 1);
            Assert.False(waits.AtLimit);
            clock.Advance(1);
            Assert.True(waits.AtLimit);
            Assert.False(waits.TryBeginWait());
            Assert.Equal(2, waits.Waiting);
            Assert.Equal(1, waits.Refused);

            // A wait that ends is progress: the next is let in again.
            waits.EndWait();
            Begin(waits, 2);
            Assert.Equal(3, waits.Waiting);
        });
    }

    [Fact]
    public void UnderTheLimitAStallRefusesNothing()
    {
        With(4, (waits, clock) =>
        {
            Begin(waits, 3);
            clock.Advance(60_000);
            Begin(waits, 1);
            Assert.True(waits.AtLimit);
            Assert.False(waits.TryBeginWait());
        });
    }

    [Fact]
    public void PastTheHardLimitEvenMovingWaitsAreRefused()
    {
        With(2, (waits, clock) =>
        {
            Begin(waits, 2 * ShardWaitLimit.HardLimitFactor);
            Assert.True(waits.AtLimit);
            Assert.False(waits.TryBeginWait());
            Assert.Equal(1, waits.Refused);
        });
    }

    [Fact]
    public void ZeroIsNoLimit()
    {
        With(0, (waits, clock) =>
        {
            Begin(waits, 500);
            clock.Advance(60_000);
            Assert.False(waits.AtLimit);
            Begin(waits, 1);
            Assert.Equal(0, waits.Refused);
        });
    }
}
