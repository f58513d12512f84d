namespace Diagnostics.Server.Engine;

/// <summary>
/// Periodic housekeeping each shard runs on its own thread: active expiry (Redis's sampling
/// cycle: 20 keys with a TTL per round, repeated while more than 10% of the sample had expired,
/// within a quarter of the cron period), eviction while memory is over maxmemory, then
/// incremental rehashing and shrinking.
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

    /// <summary>Set while CLIENT PAUSE holds writes: no active expiry until it ends.</summary>
    internal volatile bool WritesPaused;

    /// <summary>
    /// Set while this server is a replica: no active expiry, and lazy expiry reports a key missing
    /// without deleting it (Database.LookupSlot): only the master's DELs remove keys, so the
    /// replica's dataset stays the master's.
    /// </summary>
    public volatile bool ReplicaMode;

    /// <summary>Where an expiry pass that took latency-monitor-threshold or longer is recorded (expire-cycle).</summary>
    public Diagnostics.Latency.LatencyMonitor? LatencyMonitor { get; set; }

    /// <summary>Hot-key sketches, decayed by each shard's pass.</summary>
    public Diagnostics.HotKeys.HotKeys? HotKeys { get; set; }

    /// <summary>Where the DELs of keys the cron expired or evicted go (the AOF), while the shard is still held.</summary>
    public IPropagationSink? Propagation { get; set; }

    /// <summary>maxmemory: each cron pass evicts from its shard while memory is over the limit.</summary>
    public Eviction? Eviction { get; set; }

    /// <summary>Where the keyspace events of the cron's deletions (expired, evicted) go.</summary>
    public IKeyspaceEvents? Events { get; set; }

    public void Run(Shard shard)
    {
        var eviction = Eviction;
        var result = EvictionResult.Ok;
        var held = BeginPass(shard);
        try
        {
            HotKeys?.Sketch(shard.Index).DecayIfDue(Environment.TickCount64);
            if (ActiveExpireEnabled && !WritesPaused && !ReplicaMode)
            {
                long started = System.Diagnostics.Stopwatch.GetTimestamp();
                ActiveExpire(shard);
                LatencyMonitor?.RecordSince(Diagnostics.Latency.LatencyEvents.ExpireCycle, started);
            }
            // Memory comes back down without traffic, as Redis's cron-driven eviction does.
            if (eviction is not null)
                result = eviction.Perform(shard, background: true);
        }
        finally
        {
            EndPass(shard, held);
        }
        // Still over after this shard's share: the other shards' passes carry on in the background.
        if (eviction is not null && result != EvictionResult.Fail && eviction.IsOverLimit)
            eviction.RequestBackground();
        foreach (var db in shard.Databases)
            db.Housekeep(1);
    }

    /// <summary>One background eviction pass over <paramref name="shard"/>, which the caller holds; its DELs reach the AOF.</summary>
    public EvictionResult EvictInBackground(Shard shard) => Evict(shard, background: true);

    /// <summary>
    /// A pass over <paramref name="shard"/>, which the caller holds besides the shards of the
    /// command it is running, for that command: its DELs reach the AOF before the shard is let go
    /// (a later write to the same key must follow them in the file). The pass has its own scope:
    /// the command's stays attached to the command's shards.
    /// </summary>
    public EvictionResult EvictForCommandElsewhere(Shard shard) => Evict(shard, background: false);

    private EvictionResult Evict(Shard shard, bool background)
    {
        if (Eviction is not { } eviction)
            return EvictionResult.Fail;
        var held = BeginPass(shard);
        try
        {
            return eviction.Perform(shard, background);
        }
        finally
        {
            EndPass(shard, held);
        }
    }

    /// <summary>
    /// Attaches the shard's cron scope for a pass (keys it deletes are logged as DELs while the AOF
    /// is on); returns the scope that was attached before, put back by <see cref="EndPass"/>.
    /// </summary>
    private CommandEffects? BeginPass(Shard shard)
    {
        var scope = shard.CronEffects ??= new CommandEffects(Events);
        scope.Events = Events; // set after the shards started, which may run a pass first
        scope.Open(Propagation is { Enabled: true } sink ? shard.CronLog ??= sink.NewBuffer() : null, mayWrite: true);
        var previous = shard.Effects;
        shard.Effects = scope;
        return previous;
    }

    /// <summary>Hands the logged DELs to the AOF while the shard is still held, so they stay in order with its writes.</summary>
    private void EndPass(Shard shard, CommandEffects? previous)
    {
        var scope = shard.Effects!;
        shard.Effects = previous;
        scope.FlushDeferred();
        if (scope.Propagation is { } log)
            Propagation!.Commit(log);
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
