using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Diagnostics.Server.Diagnostics.Threads;

namespace Diagnostics.Server.Diagnostics.Latency;

/// <summary>
/// Per-command latency distributions (Redis 7's latency tracking: INFO latencystats, LATENCY
/// HISTOGRAM). One instance is one thread's row: every command that thread executes adds its
/// duration to the histogram of its command id, with plain arithmetic on memory no other thread
/// writes: no lock, no interlocked operation, no shared cache line. A row allocates a command's
/// histogram (<see cref="LatencyBuckets.Count"/> counters) the first time its thread runs it, so
/// commands never used cost nothing. Rows ride on the thread's <see cref="ThreadCounters"/> row,
/// which the data path has already looked up: a thread-static lookup of their own would double
/// the cost of recording (about 2 ns of 4 measured). Readers sum the rows without stopping the
/// writers and accept counts a moment stale.
/// </summary>
public sealed class CommandLatency
{
    private static readonly Lock s_gate = new();
    // Replaced, never changed in place, when a thread registers: readers walk it without the lock.
    private static volatile CommandLatency[] s_rows = [];
    private static int s_commandCount = 256;
    private static bool s_enabled = true;

    private readonly long[]?[] _histograms;

    private CommandLatency(int commands) => _histograms = new long[]?[commands];

    /// <summary>latency-tracking: when false, nothing is recorded; what was recorded stays readable.</summary>
    public static bool Enabled
    {
        get => s_enabled;
        set => s_enabled = value;
    }

    /// <summary>Sets how many command ids rows must hold; call once before serving.</summary>
    public static void Configure(int commandCount) => s_commandCount = commandCount;

    /// <summary>A new row for the calling thread, which alone records into it (<see cref="ThreadCounters.Latency"/>).</summary>
    internal static CommandLatency CreateRow()
    {
        var row = new CommandLatency(s_commandCount);
        lock (s_gate)
            s_rows = [.. s_rows, row];
        return row;
    }

    /// <summary>Records one execution of command <paramref name="commandId"/> that took <paramref name="ticks"/> Stopwatch ticks; owner thread only.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Record(int commandId, long ticks)
    {
        if (!s_enabled)
            return;
        long[] counts = _histograms[commandId] ?? Allocate(commandId);
        // IndexOf always answers inside the histogram: skip the bounds check on the hottest line.
        Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(counts), LatencyBuckets.IndexOf(LatencyBuckets.TicksToNanos(ticks)))++;
    }

    /// <summary>Command <paramref name="commandId"/>'s distribution summed over all threads; empty if never recorded.</summary>
    public static LatencyDistribution Snapshot(int commandId)
    {
        var sum = new long[LatencyBuckets.Count];
        foreach (var row in s_rows)
        {
            if (commandId >= row._histograms.Length || Volatile.Read(ref row._histograms[commandId]) is not { } counts)
                continue;
            for (int i = 0; i < sum.Length; i++)
                sum[i] += Volatile.Read(ref counts[i]);
        }
        return new LatencyDistribution(sum);
    }

    /// <summary>Ids of the commands with at least one recorded call, ascending.</summary>
    public static List<int> CommandsWithData()
    {
        var ids = new List<int>();
        var rows = s_rows;
        for (int id = 0; id < s_commandCount; id++)
        {
            foreach (var row in rows)
            {
                if (id < row._histograms.Length && Volatile.Read(ref row._histograms[id]) is { } counts && HasData(counts))
                {
                    ids.Add(id);
                    break;
                }
            }
        }
        return ids;
    }

    /// <summary>
    /// CONFIG RESETSTAT: zeroes every histogram (Redis frees them; a zeroed one reads the same, and
    /// its owner need not allocate it again). Racy by design: a concurrent sample may survive.
    /// </summary>
    public static void ResetAll()
    {
        foreach (var row in s_rows)
            foreach (var counts in row._histograms)
                if (counts is not null)
                    Array.Clear(counts);
    }

    private static bool HasData(long[] counts)
    {
        foreach (long n in counts)
            if (n != 0)
                return true;
        return false;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private long[] Allocate(int commandId)
    {
        var counts = new long[LatencyBuckets.Count];
        Volatile.Write(ref _histograms[commandId], counts);
        return counts;
    }
}
