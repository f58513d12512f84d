namespace Diagnostics.Contracts;

/// <summary>One thread's figures over a history window, aligned with <see cref="MetricHistory.Times"/> (0 before it existed).</summary>
public sealed record ThreadHistory(int OsThreadId, string Name, string Role, float[] CpuPercent, float[] TrackedBytes, float[] NetBytesPerSecond, float[] DiskBytesPerSecond);
