namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// In-process tests of the tracked allocator and the structures built on it. They run alone
/// (no other collection in parallel), so process-wide totals are stable while they compare them.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class NativeMemoryCollection
{
    public const string Name = "native memory";
}
