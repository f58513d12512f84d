namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// Tests that need the machine's cores to themselves (a thread held near 100% of a core for
/// seconds): they run alone, after the parallel collections.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class QuietMachineCollection
{
    public const string Name = "quiet machine";
}
