using System.Globalization;

namespace Diagnostics.Server.Engine;

/// <summary>
/// "Too busy", as RavenDB answers it: a command for several shards that finds one held waits for
/// it on a thread of the pool, and when commands that hold shards long (DEBUG SLEEP, KEYS, a long
/// script) keep it up, those waits pile up until the pool starves. Past
/// <see cref="Limit"/> waiting commands (max-waiting-commands), the next one is refused at once
/// with TOOBUSY instead: the client hears it can retry, and the server keeps its threads. Counted
/// here (INFO toobusy_rejected_calls), by client, and in the history; the doctor names the holder
/// and the refused clients.
/// </summary>
/// <remarks>
/// Under a limit, each waiting command also raises the pool's minimum thread count by one while it
/// waits, as the runtime does for a Task.Wait on a pool thread: the pool then adds a thread at once
/// instead of one or two a second, so the waits never starve the work queued behind them (the
/// studio's feed, hand-offs, timers). Bounded by the limit; with no limit there is no bound, so
/// the waits take the pool's own threads.
/// </remarks>
public sealed class ShardWaitLimit
{
    public const string ErrorCode = "TOOBUSY";
    public const int DefaultLimit = 16;
    private readonly Lock _compensation = new();
    private readonly int _baseMinWorkers;
    private int _waiting;
    private int _peak;
    private long _refused;
    // Threads added to the pool's minimum now (under _compensation).
    private int _compensated;

    public ShardWaitLimit()
    {
        ThreadPool.GetMinThreads(out _baseMinWorkers, out _);
    }

    /// <summary>The most commands that may wait on threads at once; 0: no limit.</summary>
    public int Limit { get; set; }

    /// <summary>Commands refused since start (a refused EXEC included, which replies EXECABORT).</summary>
    public long Refused => Interlocked.Read(ref _refused);

    /// <summary>Commands waiting now.</summary>
    public int Waiting => Volatile.Read(ref _waiting);

    /// <summary>The most that waited at once since the last call (the sampler's gauge).</summary>
    public int TakePeak() => Interlocked.Exchange(ref _peak, Volatile.Read(ref _waiting));

    /// <summary>Counts one more waiting command, or refuses it (false) when <see cref="Limit"/> are waiting already.</summary>
    public bool TryBeginWait()
    {
        int now = Interlocked.Increment(ref _waiting);
        int limit = Limit;
        if (limit != 0 && now > limit)
        {
            Interlocked.Decrement(ref _waiting);
            Interlocked.Increment(ref _refused);
            return false;
        }
        if (limit != 0)
            Compensate();
        int peak = Volatile.Read(ref _peak);
        while (now > peak)
        {
            int seen = Interlocked.CompareExchange(ref _peak, now, peak);
            if (seen == peak)
                break;
            peak = seen;
        }
        return true;
    }

    public void EndWait()
    {
        Interlocked.Decrement(ref _waiting);
        if (Limit != 0 || _compensated != 0)
            Compensate();
    }

    /// <summary>The pool's minimum: its own, plus one thread for each command waiting now.</summary>
    private void Compensate()
    {
        lock (_compensation)
        {
            int extra = Limit == 0 ? 0 : Math.Min(Volatile.Read(ref _waiting), Limit);
            if (extra == _compensated)
                return;
            ThreadPool.GetMinThreads(out _, out int io);
            ThreadPool.SetMinThreads(_baseMinWorkers + extra, io);
            _compensated = extra;
        }
    }

    /// <summary>True when one more wait would be refused.</summary>
    public bool AtLimit
    {
        get
        {
            int limit = Limit;
            return limit != 0 && Volatile.Read(ref _waiting) >= limit;
        }
    }

    /// <summary>The refusal, saying what is full and which setting bounds it (made once per limit: refusals come in floods).</summary>
    public string Error()
    {
        int limit = Limit;
        var made = Volatile.Read(ref _error);
        if (made is null || made.Limit != limit)
        {
            made = new ErrorText(limit, string.Create(CultureInfo.InvariantCulture,
                $"{ErrorCode} the server is too busy: {limit} commands already wait for shards that other commands hold (max-waiting-commands); refused instead of queued, try again shortly"));
            Volatile.Write(ref _error, made);
        }
        return made.Text;
    }

    private ErrorText? _error;

    private sealed record ErrorText(int Limit, string Text);
}
