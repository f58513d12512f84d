using System.Text;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The keyspace hash table in process: entries stay findable while the table grows and shrinks
/// by incremental rehashing (including entries added and removed in the middle of a rehash), the
/// counts stay right, and a cursor scan visits every entry.
/// </summary>
[Collection(NativeMemoryCollection.Name)]
public sealed unsafe class KeyTableTests
{
    private const int Count = 100_000;
    // The growth from 65,536 to 131,072 buckets starts at 65,537 keys; by 80,000 lookups it is far from done.
    private const int RehashingFrom = 80_000;

    [Fact]
    public void InsertFindAndUnlinkThroughGrowthAndShrink()
    {
        using var table = new KeyTable();
        bool sawRehash = false;
        for (int i = 0; i < Count; i++)
        {
            byte[] key = Key(i);
            uint hash = Keyspace.Hash(key);
            // Lookups move the rehash along, as commands do; the last 20% are inserted without
            // any, so the growth they trigger is still in progress when the removals start.
            if (i < RehashingFrom)
                Assert.True(table.Find(key, hash) == null, $"key {i} found before it was inserted");
            table.Insert(EntryStore.AllocateString(key, Value(i)), hash);
            sawRehash |= table.IsRehashing;
        }
        Assert.True(sawRehash, "the table never rehashed while growing");
        Assert.Equal(Count, table.Count);

        // Remove 95% in random order while the last growth is still being rehashed, adding new
        // keys as we go, so entries are unlinked from both tables and from chain heads and tails.
        Assert.True(table.IsRehashing, "expected the last growth to be still rehashing");
        var order = Enumerable.Range(0, Count).OrderBy(_ => Random.Shared.Next()).ToArray();
        var removed = new HashSet<int>();
        int added = 0;
        long expected = Count;
        for (int n = 0; n < Count * 95 / 100; n++)
        {
            int i = order[n];
            byte[] key = Key(i);
            Entry** slot = table.FindSlot(key, Keyspace.Hash(key));
            Assert.True(slot != null, $"key {i} missing before its removal");
            EntryStore.Free(table.Unlink(slot));
            removed.Add(i);
            expected--;
            if (n % 50 == 0)
            {
                int extra = Count + added++;
                byte[] extraKey = Key(extra);
                uint extraHash = Keyspace.Hash(extraKey);
                Assert.True(table.Find(extraKey, extraHash) == null);
                table.Insert(EntryStore.AllocateString(extraKey, Value(extra)), extraHash);
                expected++;
            }
            Assert.Equal(expected, table.Count);
        }
        for (int i = 0; i < Count + added; i++)
        {
            if (removed.Contains(i))
                Assert.True(table.Find(Key(i), Keyspace.Hash(Key(i))) == null, $"removed key {i} still found");
            else
                AssertFound(table, i);
        }

        FinishRehash(table);
        long bucketsBefore = table.BucketCount;
        table.ShrinkIfSparse();
        Assert.True(table.IsRehashing, $"a table with {table.Count} keys in {bucketsBefore} buckets did not start shrinking");
        // Lookups and removals during the shrink's rehash.
        int removedDuringShrink = 0;
        for (int i = 0; i < Count + added && table.IsRehashing; i++)
        {
            if (removed.Contains(i))
                continue;
            if (i % 3 == 0)
            {
                Entry** slot = table.FindSlot(Key(i), Keyspace.Hash(Key(i)));
                Assert.True(slot != null, $"key {i} lost during the shrink");
                EntryStore.Free(table.Unlink(slot));
                removed.Add(i);
                removedDuringShrink++;
            }
            else
            {
                AssertFound(table, i);
            }
        }
        Assert.True(removedDuringShrink > 0);
        FinishRehash(table);
        Assert.True(table.BucketCount < bucketsBefore, $"{table.BucketCount} buckets after shrinking from {bucketsBefore}");
        Assert.True(table.BucketCount >= table.Count / 2);

        long remaining = 0;
        for (int i = 0; i < Count + added; i++)
        {
            if (removed.Contains(i))
                continue;
            AssertFound(table, i);
            remaining++;
        }
        Assert.Equal(remaining, table.Count);

        for (int i = 0; i < Count + added; i++)
        {
            if (removed.Contains(i))
                continue;
            Entry** slot = table.FindSlot(Key(i), Keyspace.Hash(Key(i)));
            EntryStore.Free(table.Unlink(slot));
        }
        Assert.Equal(0, table.Count);
    }

    [Fact]
    public void UnlinkingANewEntryBehindAnotherDuringRehashKeepsBothTablesCounted()
    {
        using var table = new KeyTable();
        int next = 0;
        while (!table.IsRehashing)
        {
            byte[] key = Key(next);
            table.Insert(EntryStore.AllocateString(key, Value(next++)), Keyspace.Hash(key));
        }
        // While rehashing, BucketCount is the old size plus the new, twice as large.
        long oldSize = table.BucketCount / 3, newSize = oldSize * 2;

        // Two new keys for the same new bucket whose old bucket is far from migrated: both go to the
        // new table, the second in front of the first, so the first is unlinked through a chain link.
        int first = -1, second = -1;
        for (int candidate = 1_000_000; second < 0; candidate++)
        {
            uint hash = Keyspace.Hash(Key(candidate));
            if ((hash & (oldSize - 1)) < oldSize / 2)
                continue;
            if (first < 0)
                first = candidate;
            else if ((hash & (newSize - 1)) == (Keyspace.Hash(Key(first)) & (newSize - 1)))
                second = candidate;
        }
        foreach (int i in new[] { first, second })
            table.Insert(EntryStore.AllocateString(Key(i), Value(i)), Keyspace.Hash(Key(i)));
        long count = table.Count;

        Entry** slot = table.FindSlot(Key(first), Keyspace.Hash(Key(first)));
        Assert.True(slot != null);
        EntryStore.Free(table.Unlink(slot));
        Assert.Equal(count - 1, table.Count);

        FinishRehash(table);
        Assert.Equal(count - 1, table.Count);
        for (int i = 0; i < next; i++)
            AssertFound(table, i);
        AssertFound(table, second);
        var visitor = new CollectingVisitor(new HashSet<string>());
        table.ForEach(ref visitor);
        Assert.Equal(count - 1, visitor.Keys.Count);
    }

    [Fact]
    public void ScanVisitsEveryEntryAtRestAndWhileRehashing()
    {
        using var table = new KeyTable();
        for (int i = 0; i < Count; i++)
        {
            byte[] key = Key(i);
            if (i < RehashingFrom)
                table.Find(key, Keyspace.Hash(key)); // each lookup moves the rehash along, as commands do
            table.Insert(EntryStore.AllocateString(key, Value(i)), Keyspace.Hash(key));
        }
        Assert.True(table.IsRehashing, "expected the last growth to be still rehashing");
        AssertScanSeesAll(table, Enumerable.Range(0, Count));

        FinishRehash(table);
        Assert.False(table.IsRehashing);
        AssertScanSeesAll(table, Enumerable.Range(0, Count));

        var forEach = new CollectingVisitor(new HashSet<string>());
        int visits = 0;
        forEach.Visits = &visits;
        table.ForEach(ref forEach);
        Assert.Equal(Count, visits);
        Assert.Equal(Count, forEach.Keys.Count);
    }

    [Fact]
    public void ScanVisitsEntriesPresentThroughoutWhileTheTableGrowsAndShrinks()
    {
        using var table = new KeyTable();
        const int initial = 5_000;
        for (int i = 0; i < initial; i++)
            table.Insert(EntryStore.AllocateString(Key(i), Value(i)), Keyspace.Hash(Key(i)));
        FinishRehash(table);

        // Grow by a factor of 16 in the middle of the scan: every initial key must still be seen.
        var seen = new HashSet<string>();
        var visitor = new CollectingVisitor(seen);
        ulong cursor = table.Scan(0, ref visitor);
        int next = initial;
        int calls = 1;
        while (cursor != 0)
        {
            if (next < initial * 16)
            {
                for (int k = 0; k < 2_000; k++, next++)
                {
                    byte[] key = Key(next);
                    table.Find(key, Keyspace.Hash(key));
                    table.Insert(EntryStore.AllocateString(key, Value(next)), Keyspace.Hash(key));
                }
            }
            cursor = table.Scan(cursor, ref visitor);
            calls++;
        }
        Assert.True(calls > 10);
        for (int i = 0; i < initial; i++)
            Assert.True(seen.Contains(Encoding.ASCII.GetString(Key(i))), $"scan missed key {i}");

        // Now shrink in the middle of a scan: the keys that stay must all be seen.
        var kept = Enumerable.Range(0, next).Where(i => i % 50 == 0).ToHashSet();
        seen.Clear();
        cursor = table.Scan(0, ref visitor);
        bool shrunk = false;
        while (cursor != 0)
        {
            if (!shrunk)
            {
                for (int i = 0; i < next; i++)
                {
                    if (kept.Contains(i))
                        continue;
                    Entry** slot = table.FindSlot(Key(i), Keyspace.Hash(Key(i)));
                    EntryStore.Free(table.Unlink(slot));
                }
                FinishRehash(table);
                table.ShrinkIfSparse();
                Assert.True(table.IsRehashing);
                shrunk = true;
            }
            cursor = table.Scan(cursor, ref visitor);
            table.RehashStep(1);
        }
        foreach (int i in kept)
            Assert.True(seen.Contains(Encoding.ASCII.GetString(Key(i))), $"scan missed key {i}");
        Assert.Equal(kept.Count, table.Count);
    }

    [Fact]
    public void RandomEntryReturnsEntriesOfTheTable()
    {
        using var table = new KeyTable();
        var random = new Random(3);
        Assert.True(table.RandomEntry(random) == null);
        for (int i = 0; i < 1_000; i++)
            table.Insert(EntryStore.AllocateString(Key(i), Value(i)), Keyspace.Hash(Key(i)));
        var seen = new HashSet<string>();
        for (int n = 0; n < 5_000; n++)
        {
            Entry* e = table.RandomEntry(random);
            Assert.True(e != null);
            string key = Encoding.ASCII.GetString(Entry.KeyOf(e));
            Assert.True(table.Find(Entry.KeyOf(e), Keyspace.Hash(Entry.KeyOf(e))) == e);
            seen.Add(key);
        }
        Assert.True(seen.Count > 500, $"only {seen.Count} distinct keys in 5000 random picks of 1000");
    }

    private static void AssertScanSeesAll(KeyTable table, IEnumerable<int> keys)
    {
        var seen = new HashSet<string>();
        var visitor = new CollectingVisitor(seen);
        ulong cursor = 0;
        do
            cursor = table.Scan(cursor, ref visitor);
        while (cursor != 0);
        foreach (int i in keys)
            Assert.True(seen.Contains(Encoding.ASCII.GetString(Key(i))), $"scan missed key {i}");
    }

    private static void FinishRehash(KeyTable table)
    {
        while (table.RehashStep(1000))
        {
        }
    }

    private static void AssertFound(KeyTable table, int i)
    {
        byte[] key = Key(i);
        Entry* e = table.Find(key, Keyspace.Hash(key));
        Assert.True(e != null, $"key {i} not found");
        Assert.True(Entry.KeyOf(e).SequenceEqual(key), $"key {i} found the wrong entry");
        Assert.True(Entry.ValueOf(e).SequenceEqual(Value(i)), $"key {i} has the wrong value");
    }

    private static byte[] Key(int i) => Encoding.ASCII.GetBytes($"key:{i}");
    private static byte[] Value(int i) => Encoding.ASCII.GetBytes($"value:{i * 7}");

    private struct CollectingVisitor(HashSet<string> keys) : IEntryVisitor
    {
        public readonly HashSet<string> Keys = keys;
        public int* Visits;

        public void Visit(Entry* entry)
        {
            Keys.Add(Encoding.ASCII.GetString(Entry.KeyOf(entry)));
            if (Visits != null)
                (*Visits)++;
        }
    }
}
