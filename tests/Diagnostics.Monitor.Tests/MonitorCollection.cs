namespace Diagnostics.Server.Tests.Monitor;

/// <summary>
/// The monitor tests run one at a time: each creates tracefs instances and may check that none
/// is left, which another monitor running in parallel would confuse.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class MonitorCollection
{
    public const string Name = "monitor";
}
