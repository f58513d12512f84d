using System.Buffers.Binary;
using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.Memory;
using Diagnostics.Server.Persistence;
using Xunit;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The intset small sets of integers are held in: Redis's exact bytes (width, count, sorted
/// little-endian members), checked against a sorted model after every step and read back by the
/// RDB reader's validating <see cref="Intset"/>; widths that only grow; memory given back.
/// </summary>
public sealed unsafe class NativeIntsetTests
{
    [Fact]
    public void RandomAddsAndRemovesMatchASortedModel()
    {
        var random = new Random(20261127);
        var model = new SortedSet<long>();
        byte* set = NativeIntset.Create();
        int widest = 2;
        try
        {
            for (int step = 0; step < 5000; step++)
            {
                long value = RandomValue(random, step);
                if (random.Next(3) > 0)
                {
                    set = NativeIntset.Add(set, value, out bool added);
                    Assert.Equal(model.Add(value), added);
                    widest = Math.Max(widest, NativeIntset.WidthFor(value));
                }
                else
                {
                    long present = model.Count > 0 && random.Next(2) == 0 ? model.ElementAt(random.Next(model.Count)) : value;
                    set = NativeIntset.Remove(set, present, out bool removed);
                    Assert.Equal(model.Remove(present), removed);
                }
                Assert.Equal(widest, NativeIntset.Width(set)); // never narrower again, as in Redis
                AssertSame(model, set);
                long probe = RandomValue(random, step);
                Assert.Equal(model.Contains(probe), NativeIntset.Contains(set, probe));
            }
        }
        finally
        {
            TrackedAllocator.Free(set);
        }
    }

    private static long RandomValue(Random random, int step) => (step % 4) switch
    {
        0 => random.Next(-50, 50),
        1 => random.Next(short.MinValue - 10, short.MaxValue + 10),
        2 => random.NextInt64(int.MinValue - 10L, int.MaxValue + 10L),
        _ => random.Next(10) == 0 ? (random.Next(2) == 0 ? long.MinValue : long.MaxValue) : random.NextInt64(long.MinValue, long.MaxValue),
    };

    private static void AssertSame(SortedSet<long> model, byte* set)
    {
        Assert.Equal(model.Count, NativeIntset.Count(set));
        var reader = new Intset(NativeIntset.AsSpan(set));
        Assert.Equal(model.Count, reader.Count);
        int i = 0;
        foreach (long expected in model)
        {
            Assert.True(reader.Next(out long read));
            Assert.Equal(expected, read);
            Assert.Equal(expected, NativeIntset.Get(set, i++));
        }
        Assert.False(reader.Next(out _));
        // The block holds what it needs, give or take the allocator's rounding.
        Assert.True(TrackedAllocator.UsableSize(set) < (nuint)NativeIntset.Bytes(set) * 2 + 32);
    }

    [Fact]
    public void BytesAreRedisEncoding()
    {
        byte* set = NativeIntset.Create();
        try
        {
            Assert.Equal("0200000000000000", Convert.ToHexString(NativeIntset.AsSpan(set)));
            foreach (long v in new long[] { 5, -2, 32767, -32768, 5 })
                set = NativeIntset.Add(set, v, out _);
            Assert.Equal("02000000" + "04000000" + "0080" + "FEFF" + "0500" + "FF7F", Convert.ToHexString(NativeIntset.AsSpan(set)));
            // A negative value too wide for 16 bits upgrades every member and goes first.
            set = NativeIntset.Add(set, -40000, out bool added);
            Assert.True(added);
            Assert.Equal("04000000" + "05000000" + "C063FFFF" + "0080FFFF" + "FEFFFFFF" + "05000000" + "FF7F0000", Convert.ToHexString(NativeIntset.AsSpan(set)));
            // A positive one goes last.
            set = NativeIntset.Add(set, long.MaxValue, out _);
            Assert.Equal(8, NativeIntset.Width(set));
            Assert.Equal(long.MaxValue, NativeIntset.Max(set));
            Assert.Equal(-40000, NativeIntset.Min(set));
            Assert.Equal(8 + 6 * 8, NativeIntset.Bytes(set));
            Assert.Equal(-32768, BinaryPrimitives.ReadInt64LittleEndian(NativeIntset.AsSpan(set)[16..]));
            // Removing the wide values keeps the width (Redis never downgrades).
            set = NativeIntset.Remove(set, long.MaxValue, out bool removed);
            Assert.True(removed);
            set = NativeIntset.Remove(set, -40000, out _);
            Assert.Equal(8, NativeIntset.Width(set));
            set = NativeIntset.Remove(set, 123456789012, out removed);
            Assert.False(removed);
            Assert.False(NativeIntset.Contains(set, 4));
            Assert.True(NativeIntset.Contains(set, -2));
        }
        finally
        {
            TrackedAllocator.Free(set);
        }
    }

    [Fact]
    public void SearchGivesInsertionPoints()
    {
        byte* set = NativeIntset.Create();
        try
        {
            Assert.False(NativeIntset.Search(set, 7, out int position));
            Assert.Equal(0, position);
            foreach (long v in new long[] { 10, 20, 30 })
                set = NativeIntset.Add(set, v, out _);
            Assert.False(NativeIntset.Search(set, 5, out position));
            Assert.Equal(0, position);
            Assert.False(NativeIntset.Search(set, 25, out position));
            Assert.Equal(2, position);
            Assert.False(NativeIntset.Search(set, 35, out position));
            Assert.Equal(3, position);
            Assert.True(NativeIntset.Search(set, 20, out position));
            Assert.Equal(1, position);
            Assert.Equal(8 + 4 * 8, NativeIntset.BytesWith(set, 1L << 40));
        }
        finally
        {
            TrackedAllocator.Free(set);
        }
    }

    [Fact]
    public void DrainingGivesMemoryBack()
    {
        var thread = TrackedAllocator.CurrentThread;
        byte* set = NativeIntset.Create();
        int empty = TrackedAllocator.ChargedSize(set);
        for (int i = 0; i < 500; i++)
            set = NativeIntset.Add(set, i * 1000L, out _);
        Assert.True(TrackedAllocator.ChargedSize(set) >= 8 + 500 * 4);
        for (int i = 0; i < 500; i++)
            set = NativeIntset.Remove(set, i * 1000L, out _);
        Assert.Equal(0, NativeIntset.Count(set));
        Assert.True(TrackedAllocator.ChargedSize(set) <= empty + 32, $"an emptied intset still holds {TrackedAllocator.ChargedSize(set)} bytes");
        TrackedAllocator.Free(set);
        Assert.NotNull(thread);
    }
}
