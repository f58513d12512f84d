namespace Diagnostics.Server.UnitTests.Infrastructure;

/// <summary>
/// Tests that build a whole DataServer in this process. Its constructor sets process-wide settings
/// (the LFU factors LfuCounterTests varies, latency tracking, the keyspace notifier), and the AOF
/// tests read fsync counts from the process-wide disk accounting: they run alone, after the
/// parallel collections.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class InProcessServerCollection
{
    public const string Name = "in-process server";
}
