using System.Globalization;

namespace Diagnostics.Server.Engine;

/// <summary>
/// "Too busy", as RavenDB answers it: a command for several shards that finds one held waits for
/// it on a thread of the pool, and when commands that hold shards long (DEBUG SLEEP, KEYS, a long
/// script) keep it up, those waits pile up until the pool starves. Past
/// <see cref="Limit"/> waiting commands (max-waiting-commands), the next one is refused at once
/// with TOOBUSY instead, once the waits have stalled: the client hears it can retry, and the
/// server keeps its threads. Counted here (INFO toobusy_rejected_calls), by client, and in the
/// history; the doctor names the holder and the refused clients.
/// </summary>
/// <remarks>
/// Stalled means no wait has ended for <see cref="StallMs"/>. Ordinary contention also fills the
/// waits past the limit (50 clients pipelining MSETs over 16 shards on 2 cores, redis-benchmark's
/// own MSET test at -P 30), but there they end within milliseconds of each other; refusing those
/// turned a plain workload Redis serves into errors. So while waits keep ending, up to
/// <see cref="HardLimitFactor"/> times the limit may wait; past that, or once they stall, the
/// next is refused.
/// <para>
/// Under a limit, each waiting command also raises the pool's minimum thread count by one while it
/// waits, as the runtime does for a Task.Wait on a pool thread: the pool then adds a thread at once
/// instead of one or two a second, so the waits never starve the work queued behind them (the
/// studio's feed, hand-offs, timers). Bounded by the hard limit; with no limit there is no bound,
/// so the waits take the pool's own threads.
/// </para>
/// </remarks>
public sealed class ShardWaitLimit
{
    public const string ErrorCode = "TOOBUSY";
    public const int DefaultLimit = 16;
    /// <summary>
    /// Waits past the limit count as stalled once none has ended for this long. A shard's holder
    /// runs at most a turn of handed-off batches before letting go (tens of milliseconds on a busy
    /// shard); DEBUG SLEEP, KEYS over a big keyspace and long scripts hold for far longer.
    /// </summary>
    public const int StallMs = 100;
    /// <summary>While waits keep ending, this many times <see cref="Limit"/> may wait before the next is refused.</summary>
    public const int HardLimitFactor = 4;
    private readonly Lock _compensation = new();
    private readonly int _baseMinWorkers;
    private readonly TimeProvider _time;
    // When a wait last ended (or the first began, none waiting before): a timestamp of _time.
    private long _progressAt;
    private int _waiting;
    private int _peak;
    private long _refused;
    // Threads added to the pool's minimum now (under _compensation).
    private int _compensated;

    public ShardWaitLimit(TimeProvider? time = null)
    {
        _time = time ?? TimeProvider.System;
        _progressAt = _time.GetTimestamp();
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

    /// <summary>
    /// Counts one more waiting command, or refuses it (false): when <see cref="Limit"/> are
    /// waiting already and their waits have stalled, or <see cref="HardLimitFactor"/> times as many are.
    /// </summary>
    public bool TryBeginWait()
    {
        int now = Interlocked.Increment(ref _waiting);
        if (now == 1)
            Volatile.Write(ref _progressAt, _time.GetTimestamp());
        int limit = Limit;
        if (limit != 0 && now > limit && (now > HardLimit(limit) || Stalled()))
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
        Volatile.Write(ref _progressAt, _time.GetTimestamp());
        Interlocked.Decrement(ref _waiting);
        if (Limit != 0 || _compensated != 0)
            Compensate();
    }

    /// <summary>The pool's minimum: its own, plus one thread for each command waiting now.</summary>
    private void Compensate()
    {
        lock (_compensation)
        {
            int extra = Limit == 0 ? 0 : Math.Min(Volatile.Read(ref _waiting), HardLimit(Limit));
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
            if (limit == 0)
                return false;
            int waiting = Volatile.Read(ref _waiting);
            return waiting >= HardLimit(limit) || (waiting >= limit && Stalled());
        }
    }

    private static int HardLimit(int limit) => limit > int.MaxValue / HardLimitFactor ? int.MaxValue : limit * HardLimitFactor;

    /// <summary>No wait has ended for <see cref="StallMs"/>: the ones waiting are held up, not moving.</summary>
    private bool Stalled() => _time.GetElapsedTime(Volatile.Read(ref _progressAt)).TotalMilliseconds >= StallMs;

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
