using System.Diagnostics;
using Diagnostics.Contracts;
using Diagnostics.Server.Diagnostics.Threads;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>Everything running right now, from every thread's in-flight slot, longest-running first.</summary>
public static class InFlightView
{
    public static InFlightWork[] Build()
    {
        var running = new List<InFlightWork>();
        foreach (var row in ThreadCounters.All())
            if (Read(row) is { } work)
                running.Add(work);
        running.Sort((a, b) => b.ElapsedMicros.CompareTo(a.ElapsedMicros));
        return [.. running];
    }

    public static InFlightWork? Read(ThreadCounters row)
    {
        if (!row.IsAlive || !row.InFlight.TryRead(out string activity, out long clientId, out int database, out long started))
            return null;
        var elapsed = Stopwatch.GetElapsedTime(started);
        return new InFlightWork
        {
            OsThreadId = row.OsThreadId,
            ThreadName = row.Name,
            Activity = activity,
            ClientId = clientId,
            Database = database,
            StartedUnixMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - (long)elapsed.TotalMilliseconds,
            ElapsedMicros = elapsed.TotalMicroseconds,
        };
    }
}
