using Diagnostics.Server.Memory;

namespace Diagnostics.Fuzz.Harness;

/// <summary>
/// Runs one input and fails it when the parser allocated out of proportion to it: a length field
/// trusted before the bytes behind it arrived shows up here as a crash, long before it would
/// exhaust the machine. Managed allocation is counted on the running thread; tracked native memory
/// (request batches, keyspace values) must be back where it started once the input is done.
/// </summary>
public static class AllocationBudget
{
    /// <summary>Fixed allowance: first-use buffers (pools, a keyspace, JIT'd generics).</summary>
    public const long BaseBytes = 32L * 1024 * 1024;

    /// <summary>Per input byte: generous for LZF's best ratio (~100x) and per-element bookkeeping.</summary>
    public const long BytesPerInputByte = 256;

    public static void Run(IFuzzTarget target, ReadOnlySpan<byte> input)
    {
        long managedBefore = GC.GetAllocatedBytesForCurrentThread();
        long trackedBefore = TrackedAllocator.TotalBytes;
        target.Run(input);
        long managed = GC.GetAllocatedBytesForCurrentThread() - managedBefore;
        long cap = BaseBytes + BytesPerInputByte * input.Length;
        if (managed > cap)
            throw new AllocationBudgetExceededException($"{target.Name}: {managed:N0} managed bytes allocated for a {input.Length:N0}-byte input (cap {cap:N0})");
        long tracked = TrackedAllocator.TotalBytes - trackedBefore;
        if (tracked != 0)
            throw new AllocationBudgetExceededException($"{target.Name}: {tracked:N0} bytes of tracked native memory still held after the input");
    }
}
