namespace Diagnostics.Server.Engine;

/// <summary>
/// Periodic housekeeping each shard runs on its own thread: active expiry (Redis's sampling
/// cycle: 20 keys with a TTL per round, repeated while more than 10% of the sample had expired,
/// within a quarter of the cron period), then incremental rehashing and shrinking.
/// </summary>
public sealed class ShardCron
{
    private const int SamplesPerRound = 20;
    private const int AcceptableStalePercent = 10;

    public ShardCron(int hz) => Hz = hz;

    /// <summary>Cron frequency (Redis's hz), clamped to 1..500.</summary>
    public int Hz { get => _hz; set => _hz = Math.Clamp(value, 1, 500); }
    private int _hz;
    public int PeriodMs => 1000 / _hz;

    /// <summary>DEBUG SET-ACTIVE-EXPIRE turns this off so tests can observe lazy expiry alone.</summary>
    public bool ActiveExpireEnabled { get; set; } = true;

    /// <summary>Where an expiry pass that took latency-monitor-threshold or longer is recorded (expire-cycle).</summary>
    public Diagnostics.LatencyMonitor? LatencyMonitor { get; set; }

    /// <summary>The AOF, which receives the DELs of keys the cron expired while the shard is still held.</summary>
    public Persistence.AppendOnlyFile? Aof { get; set; }

    [ThreadStatic] private static Persistence.AofRecordBuffer? t_expiredKeys;

    public void Run(Shard shard)
    {
        if (ActiveExpireEnabled)
        {
            var aof = Aof;
            var log = aof is { Enabled: true } ? t_expiredKeys ??= new Persistence.AofRecordBuffer() : null;
            ExpiryLog.Current = log;
            long started = System.Diagnostics.Stopwatch.GetTimestamp();
            try
            {
                ActiveExpire(shard);
                LatencyMonitor?.RecordSince(Diagnostics.LatencyEvents.ExpireCycle, started);
            }
            finally
            {
                ExpiryLog.Current = null;
                if (log is { IsEmpty: false })
                {
                    aof!.Append(log);
                    log.Clear();
                }
            }
        }
        foreach (var db in shard.Databases)
            db.Housekeep(1);
    }

    private void ActiveExpire(Shard shard)
    {
        long deadline = Environment.TickCount64 + Math.Max(1, PeriodMs / 4);
        foreach (var db in shard.Databases)
        {
            while (db.ExpiresCount > 0)
            {
                long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
                var (sampled, expired) = db.ExpireSample(SamplesPerRound, now, shard.Random);
                if (sampled == 0 || expired * 100 / sampled <= AcceptableStalePercent)
                    break;
                if (Environment.TickCount64 >= deadline)
                    return;
            }
        }
    }
}
