using Diagnostics.Server.Commands;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Diagnostics.HotKeys;

/// <summary>
/// Always-on hot-key sampling, as Redis's LFU counters answer --hotkeys but without needing an
/// LFU policy or a scan: one command in <see cref="Period"/> (hotkey-sample-period) records its
/// first key in the sketch of the key's shard. The data path pays one decrement per command;
/// a sample costs a hash and a look through sixteen slots of a shard the caller already holds.
/// </summary>
public sealed class HotKeys
{
    public const int DefaultPeriod = 64;
    private readonly HotKeySketch[] _sketches;
    private readonly Keyspace _keyspace;

    public HotKeys(Keyspace keyspace)
    {
        _keyspace = keyspace;
        _sketches = new HotKeySketch[keyspace.Shards.Length];
        for (int i = 0; i < _sketches.Length; i++)
            _sketches[i] = new HotKeySketch(i);
    }

    /// <summary>One command in this many is sampled; 0 turns sampling off.</summary>
    public int Period { get; set; } = DefaultPeriod;

    public HotKeySketch Sketch(int shard) => _sketches[shard];

    /// <summary>Records the first key of a command the caller runs (holding its shards), if it has one.</summary>
    public void Sample(int database, ArgList args, CommandSpec spec, long clientId)
    {
        // EVAL-like commands: the first key follows numkeys, when numkeys is at least 1.
        int index = spec.FirstKey > 0 ? spec.FirstKey
            : spec.KeyCountIndex > 0 && args.Count > spec.KeyCountIndex + 1 && args[spec.KeyCountIndex] is [>= (byte)'1' and <= (byte)'9', ..] ? spec.KeyCountIndex + 1
            : -1;
        if (index <= 0 || index >= args.Count)
            return;
        ReadOnlySpan<byte> key = args[index];
        uint hash = Keyspace.Hash(key);
        _sketches[_keyspace.ShardIndexOf(hash)].Sample(database, key, hash, spec, clientId);
    }

    /// <summary>Every shard's entries, most sampled first, and the decayed number of samples taken.</summary>
    public (List<HotKeyEntry> Entries, long Samples) Read()
    {
        var entries = new List<HotKeyEntry>();
        long samples = 0;
        foreach (var sketch in _sketches)
            if (sketch.TryRead(entries, out long total))
                samples += total;
        entries.Sort((a, b) => b.Count.CompareTo(a.Count));
        return (entries, samples);
    }
}
