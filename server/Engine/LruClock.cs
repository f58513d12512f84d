namespace Diagnostics.Server.Engine;

/// <summary>Seconds since the process started, as stored in each entry for idle time and LRU.</summary>
public static class LruClock
{
    private static readonly long s_origin = Environment.TickCount64;

    public static uint Now => (uint)((Environment.TickCount64 - s_origin) / 1000);

    public static long IdleSeconds(uint accessClock) => Math.Max(0, (long)Now - accessClock);
}
