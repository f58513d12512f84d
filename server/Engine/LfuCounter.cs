namespace Diagnostics.Server.Engine;

/// <summary>
/// Redis's logarithmic access frequency counter (OBJECT FREQ, LFU eviction): 8 bits that grow
/// with probability 1/((counter - LFU_INIT_VAL) * lfu-log-factor + 1) per access and lose one
/// per lfu-decay-time minutes without access. Redis keeps the minute of the last decrement next
/// to the counter; here it is the minute of the entry's access clock, which every access sets
/// together with the counter, so the two agree.
/// </summary>
public static class LfuCounter
{
    public const byte InitialValue = 5;

    /// <summary>lfu-log-factor: how many hits it takes to saturate the counter (Redis default 10).</summary>
    public static int LogFactor { get; set; } = 10;

    /// <summary>lfu-decay-time in minutes; 0 never decays (Redis default 1).</summary>
    public static int DecayMinutes { get; set; } = 1;

    /// <summary>Redis's LFULogIncr.</summary>
    public static byte Increment(byte counter, Random random)
    {
        if (counter == 255)
            return counter;
        double baseValue = Math.Max(0, counter - InitialValue);
        double p = 1.0 / (baseValue * LogFactor + 1);
        return random.NextDouble() < p ? (byte)(counter + 1) : counter;
    }

    /// <summary>
    /// Redis's LFUDecrAndReturn: the counter less one for every full decay period since the last
    /// access, without storing it (OBJECT FREQ and eviction sampling read it this way).
    /// </summary>
    public static byte Decayed(byte counter, uint accessClock) => Decayed(counter, accessClock, LruClock.Now);

    /// <summary><see cref="Decayed(byte, uint)"/> at clock <paramref name="now"/>, for callers that already read it.</summary>
    public static byte Decayed(byte counter, uint accessClock, uint now)
    {
        int decay = DecayMinutes;
        if (decay == 0 || counter == 0)
            return counter;
        long periods = LruClock.MinutesBetween(accessClock, now) / decay;
        return periods >= counter ? (byte)0 : (byte)(counter - periods);
    }
}
