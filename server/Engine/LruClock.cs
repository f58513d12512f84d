namespace Diagnostics.Server.Engine;

/// <summary>
/// The clock each entry stores at its last access (idle time, LRU eviction, LFU decay), in 32
/// bits. Redis keeps whole seconds in 24 bits; here a tick is 1/4096 of a minute (about 14.6 ms),
/// so approximated LRU can order keys written within the same second, a minute boundary (LFU
/// decay) is a shift, and the clock wraps after exactly 2^20 minutes (728 days; Redis: 194),
/// differences being taken modulo 2^32 as Redis does.
/// </summary>
public static class LruClock
{
    public const int MinuteShift = 12;
    public const int TicksPerMinute = 1 << MinuteShift;
    private static readonly long s_origin = Environment.TickCount64;

    public static uint Now => (uint)((Environment.TickCount64 - s_origin) * TicksPerMinute / 60_000);

    /// <summary>Whole seconds since the process started (INFO lru_clock).</summary>
    public static long Seconds => (Environment.TickCount64 - s_origin) / 1000;

    /// <summary>A stored clock value in whole seconds since start (DEBUG OBJECT lru:).</summary>
    public static long SecondsOf(uint accessClock) => (long)accessClock * 60 / TicksPerMinute;

    /// <summary>Time since <paramref name="accessClock"/> in milliseconds, wrap-safe (LRU eviction's score).</summary>
    public static long IdleMilliseconds(uint accessClock) => (long)unchecked(Now - accessClock) * 60_000 / TicksPerMinute;

    public static long IdleSeconds(uint accessClock) => IdleMilliseconds(accessClock) / 1000;

    /// <summary>Minute boundaries passed since <paramref name="accessClock"/> (Redis's LFUTimeElapsed), wrap-safe.</summary>
    public static uint MinutesSince(uint accessClock) => MinutesBetween(accessClock, Now);

    public static uint MinutesBetween(uint then, uint now)
        => unchecked((now >> MinuteShift) - (then >> MinuteShift)) & (uint.MaxValue >> MinuteShift);
}
