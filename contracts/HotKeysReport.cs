namespace Diagnostics.Contracts;

/// <summary>
/// The keys most commands touch now, from the always-on sampling (one command in
/// <see cref="SamplePeriod"/>), counts halved every second so they weigh the last few seconds.
/// </summary>
public sealed record HotKeysReport
{
    /// <summary>hotkey-sample-period: one command in this many is sampled (0: off).</summary>
    public int SamplePeriod { get; init; }
    /// <summary>The decayed number of samples behind the shares (about two seconds' worth).</summary>
    public long Samples { get; init; }
    public IReadOnlyList<HotKey> Keys { get; init; } = [];
}

/// <summary>
/// One hot key: its share of the sampled commands, the rate that suggests, the command that last
/// touched it and the last clients that did. The name is printable and cut to 64 characters.
/// </summary>
public sealed record HotKey(int Database, string Key, int Shard, double Share, double EstimatedPerSecond, string Command, IReadOnlyList<long> Clients);
