using Diagnostics.Server.Diagnostics.Latency;

namespace Diagnostics.Server.Diagnostics.Threads;

/// <summary>
/// Per-thread command counters, network bytes and the thread's in-flight slot. Each thread writes
/// only its own row with plain arithmetic; INFO, the thread view and the sampler sum or read the
/// rows and accept slightly stale figures. This keeps per-command bookkeeping off shared cache
/// lines.
/// </summary>
public sealed class ThreadCounters
{
    private static readonly Lock s_gate = new();
    // Copy-on-write: a thread's first command replaces the array under the gate, and readers
    // (INFO, the sampler, the latency views) take the current array with no lock and no copy.
    private static ThreadCounters[] s_rows = [];
    private static int s_commandCount = 256;
    [ThreadStatic] private static ThreadCounters? t_row;

    private ThreadCounters(int commands)
    {
        Thread = Thread.CurrentThread;
        OsThreadId = Memory.OsThread.CurrentId();
        Calls = new long[commands];
        Ticks = new long[commands];
        Failed = new long[commands];
        Rejected = new long[commands];
        AllocatedBytes = new long[commands];
    }

    internal Thread Thread { get; }
    public int OsThreadId { get; }
    public bool IsAlive => Thread.IsAlive;
    public string Name => Memory.OsThread.NameOf(Thread);
    /// <summary>What this thread runs now (a command, or the server's own work).</summary>
    public InFlightSlot InFlight { get; } = new();

    public readonly long[] Calls;
    /// <summary>Stopwatch ticks spent executing each command.</summary>
    public readonly long[] Ticks;
    public readonly long[] Failed;
    public readonly long[] Rejected;
    /// <summary>Managed bytes allocated while running each command (measured for commands not flagged fast, see CommandExecutor.Call).</summary>
    public readonly long[] AllocatedBytes;
    /// <summary>This thread's command latency histograms.</summary>
    public readonly CommandLatency Latency = CommandLatency.CreateRow();
    public long KeyspaceHits;
    /// <summary>Commands left before this thread samples one for the hot-key view.</summary>
    public int HotKeyCountdown;
    public long KeyspaceMisses;
    /// <summary>Stream entries this thread's commands made pending in a consumer group (XREADGROUP without NOACK).</summary>
    public long StreamDeliveries;
    /// <summary>Pending stream entries this thread's XACKs acknowledged.</summary>
    public long StreamAcks;
    /// <summary>
    /// Writes that changed data (Redis's dirty counter, counted per command here where Redis counts
    /// per changed element): the save schedule's "changes". Never reset by CONFIG RESETSTAT.
    /// </summary>
    public long Changes;
    /// <summary>Requests naming no known command (they have no id of their own; INFO total_error_replies).</summary>
    public long UnknownCommands;
    /// <summary>Handlers that threw: the error reply was the server's fault (INFO unexpected_error_replies).</summary>
    public long InternalErrors;
    /// <summary>Network bytes this thread read from and wrote to client sockets.</summary>
    public long NetInputBytes;
    public long NetOutputBytes;
    /// <summary>TLS handshakes this thread completed, and the microseconds they took.</summary>
    public long TlsHandshakes;
    public long TlsHandshakeMicros;

    /// <summary>Distinct error codes tracked per thread at most, as Redis caps errorstats (ERRORSTATS_LIMIT).</summary>
    public const int MaxErrorCodes = 128;

    // Error replies by code (the first word: ERR, WRONGTYPE, MISCONF...). Rare next to replies, so
    // a dictionary behind the row's own lock, which only INFO ever contends for; the span lookup
    // finds a known code without allocating.
    private readonly Lock _errorGate = new();
    private readonly Dictionary<string, long> _errors = new(StringComparer.Ordinal);

    /// <summary>Counts one error reply under its code (INFO errorstats).</summary>
    public void CountError(ReadOnlySpan<char> message)
    {
        int space = message.IndexOf(' ');
        ReadOnlySpan<char> code = space < 0 ? message : message[..space];
        lock (_errorGate)
        {
            var lookup = _errors.GetAlternateLookup<ReadOnlySpan<char>>();
            if (lookup.TryGetValue(code, out long count))
                lookup[code] = count + 1;
            else if (_errors.Count < MaxErrorCodes)
                _errors.Add(code.ToString(), 1);
        }
    }

    /// <summary>Every thread's error replies by code, summed.</summary>
    public static SortedDictionary<string, long> ErrorTotals()
    {
        var totals = new SortedDictionary<string, long>(StringComparer.Ordinal);
        foreach (var row in All())
        {
            lock (row._errorGate)
            {
                foreach (var (code, count) in row._errors)
                    totals[code] = totals.GetValueOrDefault(code) + count;
            }
        }
        return totals;
    }

    /// <summary>Sets how many command ids rows must hold; call once before serving.</summary>
    public static void Configure(int commandCount) => s_commandCount = commandCount;

    public static ThreadCounters Current => t_row ?? Register();

    private static ThreadCounters Register()
    {
        var row = new ThreadCounters(s_commandCount);
        lock (s_gate)
            Volatile.Write(ref s_rows, [.. s_rows, row]);
        return t_row = row;
    }

    /// <summary>Every row so far (do not modify); rows of exited threads stay so totals never go backwards.</summary>
    public static ThreadCounters[] All() => Volatile.Read(ref s_rows);

    public static (long Calls, long Ticks, long Failed, long Rejected) Sum(int id)
    {
        long calls = 0, ticks = 0, failed = 0, rejected = 0;
        foreach (var row in All())
        {
            calls += Volatile.Read(ref row.Calls[id]);
            ticks += Volatile.Read(ref row.Ticks[id]);
            failed += Volatile.Read(ref row.Failed[id]);
            rejected += Volatile.Read(ref row.Rejected[id]);
        }
        return (calls, ticks, failed, rejected);
    }

    /// <summary>Managed bytes every thread allocated running the command.</summary>
    public static long SumAllocated(int id)
    {
        long bytes = 0;
        foreach (var row in All())
            bytes += Volatile.Read(ref row.AllocatedBytes[id]);
        return bytes;
    }

    public static (long Hits, long Misses) KeyspaceTotals()
    {
        long hits = 0, misses = 0;
        foreach (var row in All())
        {
            hits += Volatile.Read(ref row.KeyspaceHits);
            misses += Volatile.Read(ref row.KeyspaceMisses);
        }
        return (hits, misses);
    }

    /// <summary>Stream entries delivered to consumer groups and acknowledged, summed over every thread.</summary>
    public static (long Deliveries, long Acks) StreamTotals()
    {
        long deliveries = 0, acks = 0;
        foreach (var row in All())
        {
            deliveries += Volatile.Read(ref row.StreamDeliveries);
            acks += Volatile.Read(ref row.StreamAcks);
        }
        return (deliveries, acks);
    }

    /// <summary>Changing writes since start, summed over every thread.</summary>
    public static long ChangesTotal()
    {
        long changes = 0;
        foreach (var row in All())
            changes += Volatile.Read(ref row.Changes);
        return changes;
    }

    /// <summary>CONFIG RESETSTAT: racy by design; a concurrent increment may survive the reset.</summary>
    public static void ResetAll()
    {
        foreach (var row in All())
        {
            Array.Clear(row.Calls);
            Array.Clear(row.Ticks);
            Array.Clear(row.Failed);
            Array.Clear(row.Rejected);
            Array.Clear(row.AllocatedBytes);
            row.KeyspaceHits = 0;
            row.KeyspaceMisses = 0;
            row.UnknownCommands = 0;
            row.InternalErrors = 0;
            row.NetInputBytes = 0;
            row.NetOutputBytes = 0;
            row.TlsHandshakes = 0;
            row.TlsHandshakeMicros = 0;
            lock (row._errorGate)
                row._errors.Clear();
        }
    }
}
