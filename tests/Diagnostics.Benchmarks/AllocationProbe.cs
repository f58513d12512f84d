namespace Diagnostics.Benchmarks;

/// <summary>
/// Reads our server's managed_allocated_bytes (INFO memory) around a run. Each read is itself an
/// INFO call that allocates: the difference between two back-to-back reads is that cost, and
/// it is subtracted so the figure per operation is the run's own allocation.
/// </summary>
public sealed class AllocationProbe
{
    private readonly RespConnection _connection;

    private AllocationProbe(RespConnection connection, long probeCost)
    {
        _connection = connection;
        ProbeCost = probeCost;
    }

    /// <summary>Bytes one INFO memory call allocates on the server (measured, the smallest of a few).</summary>
    public long ProbeCost { get; }

    /// <summary>A probe, or null when our INFO memory has no managed_allocated_bytes field.</summary>
    public static AllocationProbe? TryCreate(RespConnection connection)
    {
        long? previous = Read(connection);
        if (previous is null)
            return null;
        long cost = long.MaxValue;
        for (int i = 0; i < 5; i++)
        {
            long current = Read(connection) ?? throw new HarnessException("managed_allocated_bytes disappeared from INFO memory");
            cost = Math.Min(cost, current - previous.Value);
            previous = current;
        }
        return new AllocationProbe(connection, Math.Max(0, cost));
    }

    public long Read() => Read(_connection) ?? throw new HarnessException("managed_allocated_bytes disappeared from INFO memory");

    /// <summary>Managed bytes per operation for a run between two reads.</summary>
    public double PerOperation(long before, long after, long operations)
        => Math.Max(0, after - before - ProbeCost) / (double)operations;

    private static long? Read(RespConnection connection)
        => ServerInfo.ReadInt64(connection, "memory", ServerInfo.ManagedAllocatedBytes);
}
