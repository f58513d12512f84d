namespace Diagnostics.Contracts;

/// <summary>One thread's /proc counters as the monitor read them, with the thread's name (comm).</summary>
public sealed record ThreadKernelCounters(int ThreadId, string Name, KernelIoCounters Io);
