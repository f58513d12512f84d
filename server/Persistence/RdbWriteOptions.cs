using Diagnostics.Server.Configuration;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// What an <see cref="RdbWriter"/> needs from the configuration, read once by whoever starts a
/// serialization (so a CONFIG SET in the middle of a snapshot cannot mix two encodings in one
/// file): LZF compression, the per-key access hint, and the limits that decide whether Redis would
/// hold a value in a compact encoding (listpack, intset), which is the encoding the RDB carries.
/// </summary>
public readonly record struct RdbWriteOptions(
    bool Compression,
    bool Checksum,
    RdbKeyHint KeyHint,
    long ZsetMaxListpackEntries,
    long ZsetMaxListpackValue,
    long SetMaxIntsetEntries,
    int ListMaxListpackSize)
{
    /// <summary>Redis 7.0's defaults: compression and checksum on, no hint, 128/64, 512, -2 (8 KB list nodes).</summary>
    public static RdbWriteOptions Default => new(true, true, RdbKeyHint.None, 128, 64, 512, -2);

    /// <summary>The options the server's settings give now (rdbcompression, rdbchecksum, maxmemory-policy, the *-max-* limits).</summary>
    public static RdbWriteOptions From(ServerConfig config) => new(
        config.RdbCompression,
        config.RdbChecksum,
        HintFor(config.MaxMemoryPolicy),
        config.ZsetMaxListpackEntries,
        config.ZsetMaxListpackValue,
        config.SetMaxIntsetEntries,
        config.ListMaxListpackSize);

    /// <summary>Redis's choice in rdbSaveKeyValuePair: the idle time under an LRU policy, the counter under an LFU one.</summary>
    public static RdbKeyHint HintFor(EvictionPolicy policy)
        => (policy & EvictionPolicy.Lru) != 0 ? RdbKeyHint.IdleTime
        : (policy & EvictionPolicy.Lfu) != 0 ? RdbKeyHint.Frequency
        : RdbKeyHint.None;
}
