using Diagnostics.Fuzz.Harness;
using Diagnostics.Server.DataTypes;

namespace Diagnostics.Fuzz.Targets;

/// <summary>
/// HyperLogLog values as a client can store them with SET, through every path that reads one:
/// the validity check, the count, the merge into registers, the dense conversion, the register
/// read, the sparse decode, and a sparse edit followed by a count. Each must refuse (false) or
/// succeed without throwing or reading outside the value; a valid input must count the same
/// before and after its conversion to dense.
/// </summary>
public sealed class HyperLogLogTarget : IFuzzTarget
{
    public string Name => "hll";

    public void Run(ReadOnlySpan<byte> input)
    {
        if (!HyperLogLog.IsValid(input))
            return;
        Span<byte> registers = new byte[HyperLogLog.RegisterCount];
        bool merged = HyperLogLog.TryMergeInto(input, registers);
        HyperLogLog.TryReadRegisters(input, registers);
        byte[] copy = input.ToArray();
        bool counted = HyperLogLog.TryEstimate(copy, out long estimate);
        // A valid cache is answered as is, as Redis does even over corrupt registers.
        bool cached = HyperLogLog.IsCacheValid(copy);
        if (HyperLogLog.TryCount(copy, out _, out _) != (counted || cached))
            throw new InvalidOperationException("TryCount and TryEstimate disagree on whether the value is sound");
        if (HyperLogLog.IsDense(input))
            return;
        if (HyperLogLog.SparseDecodeLength(input) <= 1 << 20)
            HyperLogLog.WriteSparseDecode(input, new byte[(int)HyperLogLog.SparseDecodeLength(input)]);
        byte[] dense = new byte[HyperLogLog.DenseLength];
        if (HyperLogLog.TryToDense(input, dense))
        {
            if (!merged)
                throw new InvalidOperationException("a sparse value converted to dense but would not merge");
            if (counted && HyperLogLog.TryEstimate(dense, out long after) && after != estimate)
                throw new InvalidOperationException($"the estimate changed from {estimate} to {after} on conversion to dense");
        }
        // An edit of the sparse form, in a buffer with the room the command layer gives it.
        byte[] buffer = new byte[input.Length + HyperLogLog.MaxSparseGrowth];
        input.CopyTo(buffer);
        int length = input.Length;
        HyperLogLog.ElementPosition(input[..Math.Min(8, input.Length)], out int index, out int count);
        if (HyperLogLog.SparseSet(buffer, ref length, index, count, HyperLogLog.DefaultSparseMaxBytes) == HyperLogLog.SparseSetResult.Changed)
            HyperLogLog.TryEstimate(buffer.AsSpan(0, length), out _);
    }
}
