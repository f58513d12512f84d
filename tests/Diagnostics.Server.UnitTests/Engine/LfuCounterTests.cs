using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The LFU counter's arithmetic in process, where the access clock can be set back by minutes:
/// decay by one per lfu-decay-time minutes since the last access (Redis's LFUDecrAndReturn),
/// none with a decay time of 0, and the logarithmic increment's dependence on lfu-log-factor.
/// Settings are process-wide, so the tests of this class run one at a time and restore them.
/// </summary>
[Collection(nameof(LfuCounterTests))]
public sealed class LfuCounterTests : IDisposable
{
    private const uint Minute = LruClock.TicksPerMinute;

    [Theory]
    [InlineData(1, 0, 20)]
    [InlineData(1, 5, 15)]
    [InlineData(2, 5, 18)]
    [InlineData(1, 25, 0)]
    [InlineData(0, 500, 20)]
    public void DecaysOncePerDecayPeriodSinceTheLastAccess(int decayMinutes, uint idleMinutes, int expected)
    {
        LfuCounter.DecayMinutes = decayMinutes;
        // Set back from now, across the clock's wrap when the process is younger than that.
        uint accessClock = unchecked(LruClock.Now - idleMinutes * Minute);
        Assert.Equal(expected, LfuCounter.Decayed(20, accessClock));
    }

    [Fact]
    public void MinutesAreCountedAcrossTheClockWrap()
    {
        uint accessClock = unchecked(LruClock.Now - 3 * Minute);
        Assert.Equal(3u, LruClock.MinutesSince(accessClock));
        Assert.InRange(LruClock.IdleSeconds(accessClock), 179, 181);
    }

    [Fact]
    public void LogFactorSetsHowHardTheCounterGrows()
    {
        var random = new Random(42);
        LfuCounter.LogFactor = 0;
        Assert.Equal(6, LfuCounter.Increment(5, random));
        Assert.Equal(101, LfuCounter.Increment(100, random));
        Assert.Equal(255, LfuCounter.Increment(255, random));

        LfuCounter.LogFactor = 10;
        byte counter = LfuCounter.InitialValue;
        for (int i = 0; i < 1000; i++)
            counter = LfuCounter.Increment(counter, random);
        // Redis's table for factor 10: about 10 after 100 hits, 18 after 1,000.
        Assert.InRange(counter, 14, 22);
    }

    public void Dispose()
    {
        LfuCounter.DecayMinutes = 1;
        LfuCounter.LogFactor = 10;
    }
}
