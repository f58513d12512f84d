using Diagnostics.Server.Configuration;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// What an <see cref="RdbWriter"/> needs from the configuration, read once by whoever starts a
/// serialization (so a CONFIG SET in the middle of a snapshot cannot change a file halfway): LZF
/// compression, the checksum and the per-key access hint. Values are written in the form they are
/// held in, as Redis writes the encoding it holds, so no *-max-* limit is needed here.
/// </summary>
public readonly record struct RdbWriteOptions(
    bool Compression,
    bool Checksum,
    RdbKeyHint KeyHint)
{
    /// <summary>Redis 7.0's defaults: compression and checksum on, no hint.</summary>
    public static RdbWriteOptions Default => new(true, true, RdbKeyHint.None);

    /// <summary>The options the server's settings give now (rdbcompression, rdbchecksum, maxmemory-policy).</summary>
    public static RdbWriteOptions From(ServerConfig config) => new(
        config.RdbCompression,
        config.RdbChecksum,
        HintFor(config.MaxMemoryPolicy));

    /// <summary>Redis's choice in rdbSaveKeyValuePair: the idle time under an LRU policy, the counter under an LFU one.</summary>
    public static RdbKeyHint HintFor(EvictionPolicy policy)
        => (policy & EvictionPolicy.Lru) != 0 ? RdbKeyHint.IdleTime
        : (policy & EvictionPolicy.Lfu) != 0 ? RdbKeyHint.Frequency
        : RdbKeyHint.None;
}
