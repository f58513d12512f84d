namespace Diagnostics.Contracts;

/// <summary>The machine the server runs on, as far as the process can see it (cgroup limits included).</summary>
public sealed record EnvironmentReport
{
    public required string Host { get; init; }
    public required string OperatingSystem { get; init; }
    public required string KernelRelease { get; init; }
    public required string Architecture { get; init; }
    public required string Framework { get; init; }
    public int ProcessorCount { get; init; }
    public string CpuModel { get; init; } = "";
    public long TotalMemoryBytes { get; init; }
    public long AvailableMemoryBytes { get; init; }
    /// <summary>cgroup v2 memory.max (or v1 limit_in_bytes); null when unlimited or not in a cgroup.</summary>
    public long? CgroupMemoryLimitBytes { get; init; }
    /// <summary>cgroup CPU quota in cores (cpu.max); null when unlimited.</summary>
    public double? CgroupCpuLimit { get; init; }
    public string? Container { get; init; }
    public double[] LoadAverage { get; init; } = [];
    public long UptimeSeconds { get; init; }
    public string ProcessPath { get; init; } = "";
    public string WorkingDirectory { get; init; } = "";
    public int ProcessId { get; init; }
    public long OpenFileDescriptors { get; init; }
    public long MaxFileDescriptors { get; init; }
}
