namespace Diagnostics.Server.Persistence;

/// <summary>
/// The access statistic an RDB carries before each key, as Redis chooses it from maxmemory-policy:
/// the idle time (RDB_OPCODE_IDLE) under an LRU policy, the LFU counter (RDB_OPCODE_FREQ) under an
/// LFU policy, nothing otherwise. A server loading the file restores it, so eviction after a
/// restart still knows which keys went unused.
/// </summary>
public enum RdbKeyHint
{
    None,
    IdleTime,
    Frequency,
}
