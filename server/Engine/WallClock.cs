using System.Diagnostics;

namespace Diagnostics.Server.Engine;

/// <summary>
/// Unix milliseconds without reading the wall clock on every call. <see cref="UnixMs"/> converts a
/// <see cref="Stopwatch"/> timestamp the caller already took, so a command reads the clock once
/// for both its latency and the time its keys expire against; <see cref="CoarseUnixMs"/> rides
/// the kernel's coarse tick (a few ms), enough for idle times counted in seconds. Both offsets to
/// the wall clock are taken again whenever they are 100 ms old, so the results follow its steps
/// and NTP's slewing as closely as expiry's 1 ms needs; threads that recalibrate together store
/// equally good offsets, so no lock.
/// </summary>
public static class WallClock
{
    private const long RecalibrateAfterMs = 100;
    private static readonly long s_recalibrateAfter = Stopwatch.Frequency * RecalibrateAfterMs / 1000;
    // Stopwatch.Frequency is 10^9 on Linux and 10^7 on Windows: whole 100 ns ticks either way.
    private static readonly long s_timestampsPerTick = Math.Max(1, Stopwatch.Frequency / TimeSpan.TicksPerSecond);

    private static long s_calibratedAt;
    // Unix time in 100 ns ticks, less the timestamp in the same unit.
    private static long s_unixOffsetTicks;
    private static long s_coarseCalibratedAt;
    private static long s_coarseOffsetMs;

    static WallClock() => Calibrate();

    public static long UnixMs(long timestamp)
    {
        if (timestamp - Volatile.Read(ref s_calibratedAt) > s_recalibrateAfter)
            Calibrate();
        return (timestamp / s_timestampsPerTick + Volatile.Read(ref s_unixOffsetTicks)) / TimeSpan.TicksPerMillisecond;
    }

    public static long CoarseUnixMs()
    {
        long now = Environment.TickCount64;
        if (now - Volatile.Read(ref s_coarseCalibratedAt) > RecalibrateAfterMs)
            Calibrate();
        return now + Volatile.Read(ref s_coarseOffsetMs);
    }

    private static void Calibrate()
    {
        long timestamp = Stopwatch.GetTimestamp();
        long coarse = Environment.TickCount64;
        long unixTicks = DateTime.UtcNow.Ticks - DateTime.UnixEpoch.Ticks;
        Volatile.Write(ref s_unixOffsetTicks, unixTicks - timestamp / s_timestampsPerTick);
        Volatile.Write(ref s_coarseOffsetMs, unixTicks / TimeSpan.TicksPerMillisecond - coarse);
        Volatile.Write(ref s_calibratedAt, timestamp);
        Volatile.Write(ref s_coarseCalibratedAt, coarse);
    }
}
