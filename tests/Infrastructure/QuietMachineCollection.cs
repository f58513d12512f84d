namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// Tests that need the machine's cores to themselves (a thread held near 100% of a core for
/// seconds), or that load them heavily (chromium windows, garbage and blocking loads) and would
/// push other tests' 10 ms latency thresholds over: they run one at a time, after the parallel
/// collections.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class QuietMachineCollection
{
    public const string Name = "quiet machine";
}
