using System.Text;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.Memory;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The field table of big hashes, sets and sorted-set indexes: fields stay findable and counted
/// while it grows and shrinks by incremental rehashing (adds and removes in the middle of a
/// rehash), a cursor scan sees every field present throughout even when the table resizes
/// between calls, iteration and random picks see both bucket arrays, and <see cref="FieldTable.Bytes"/>
/// stays what the allocator charged.
/// </summary>
[Collection(NativeMemoryCollection.Name)]
public sealed unsafe class FieldTableTests
{
    [Fact]
    public void FieldsStayFindableThroughGrowthAndShrinkMidRehash()
    {
        FieldTable* table = FieldTable.Create();
        long before = TrackedAllocator.CurrentThread.LiveBytes;
        try
        {
            var present = new HashSet<int>();
            bool sawRehash = false;
            for (int i = 0; i < 50_000; i++)
            {
                Assert.True(table->Set(Field(i), Value(i)));
                present.Add(i);
                sawRehash |= table->IsRehashing;
                if (i % 7 == 0)
                    Assert.False(table->Set(Field(i / 2), Value(i)), "an existing field counted as new");
            }
            Assert.True(sawRehash, "the table never rehashed while growing");
            Assert.Equal(present.Count, table->Count);
            AssertAllFindable(table, present);

            // Remove most fields in random order, so the shrink starts and runs while removals go on.
            var random = new Random(7);
            bool sawShrinkRehash = false;
            foreach (int i in present.OrderBy(_ => random.Next()).Take(48_000).ToArray())
            {
                Assert.True(table->Remove(Field(i)));
                Assert.False(table->Remove(Field(i)));
                present.Remove(i);
                sawShrinkRehash |= table->IsRehashing;
            }
            Assert.True(sawShrinkRehash, "the table never rehashed while shrinking");
            Assert.Equal(present.Count, table->Count);
            AssertAllFindable(table, present);

            var iterated = new HashSet<int>();
            foreach (FieldNode* node in *table)
                Assert.True(iterated.Add(int.Parse(Encoding.ASCII.GetString(FieldNode.FieldOf(node))[2..])));
            Assert.Equal(present, iterated);
            Assert.Equal(TrackedAllocator.CurrentThread.LiveBytes - before + TrackedAllocator.ChargedSize((byte*)table), table->Bytes);
        }
        finally
        {
            FieldTable.Destroy(table);
        }
    }

    [Fact]
    public void ScanSeesEveryFieldPresentThroughoutWhileTheTableResizes()
    {
        FieldTable* table = FieldTable.Create();
        try
        {
            for (int i = 0; i < 1_000; i++)
                table->Set(Field(i), Value(i));
            var seen = new HashSet<int>();
            var visitor = new Collector(seen);
            ulong cursor = 0;
            int next = 1_000, calls = 0;
            bool scannedMidRehash = false;
            do
            {
                scannedMidRehash |= table->IsRehashing;
                cursor = table->Scan(cursor, ref visitor);
                // Between calls the table grows (and later shrinks): fields 0..999 stay throughout.
                for (int k = 0; k < 20; k++)
                    table->Set(Field(next++), Value(0));
                if (calls++ > 300)
                    for (int k = 0; k < 40 && next - 1 > 1_000; k++)
                        table->Remove(Field(--next));
            }
            while (cursor != 0);
            Assert.True(scannedMidRehash, "no scan call happened while the table was rehashing");
            for (int i = 0; i < 1_000; i++)
                Assert.True(seen.Contains(i), $"field {i} present throughout was never visited");
        }
        finally
        {
            FieldTable.Destroy(table);
        }
    }

    [Fact]
    public void RandomPicksComeFromBothArraysDuringARehash()
    {
        FieldTable* table = FieldTable.Create();
        try
        {
            int i = 0;
            while (!table->IsRehashing || table->Count < 1_000)
            {
                table->Set(Field(i), Value(i));
                i++;
            }
            Assert.True(table->IsRehashing);
            var picked = new HashSet<int>();
            var random = new Random(3);
            for (int n = 0; n < 20_000; n++)
            {
                FieldNode* node = table->Random(random);
                Assert.True(node != null);
                picked.Add(int.Parse(Encoding.ASCII.GetString(FieldNode.FieldOf(node))[2..]));
            }
            Assert.True(picked.Count > table->Count * 9 / 10, $"only {picked.Count} of {table->Count} fields were ever picked");
        }
        finally
        {
            FieldTable.Destroy(table);
        }
    }

    private static void AssertAllFindable(FieldTable* table, HashSet<int> present)
    {
        foreach (int i in present)
        {
            FieldNode* node = table->Find(Field(i));
            Assert.True(node != null, $"field {i} not found");
        }
        Assert.True(table->Find("f:absent"u8) == null);
    }

    private static byte[] Field(int i) => Encoding.ASCII.GetBytes($"f:{i}");

    private static byte[] Value(int i) => Encoding.ASCII.GetBytes($"value {i}");

    private struct Collector(HashSet<int> seen) : IFieldVisitor
    {
        public readonly void Visit(FieldNode* node) => seen.Add(int.Parse(Encoding.ASCII.GetString(FieldNode.FieldOf(node))[2..]));
    }
}
