using Diagnostics.Server.Memory;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The tracked allocator in process: who is charged for a block, where a free from another
/// thread lands, that per-thread figures add up to the global total, how long an exited thread's
/// record lives, and that realloc keeps the data and moves the charge.
/// </summary>
[Collection(NativeMemoryCollection.Name)]
public sealed unsafe class TrackedAllocatorTests
{
    [Fact]
    public void AnAllocationIsChargedToTheAllocatingThreadAtItsRealSize()
    {
        using var thread = new DedicatedThread("alloc-owner");
        thread.Run(() =>
        {
            ThreadMemoryRecord record = TrackedAllocator.CurrentThread;
            Assert.Equal(Environment.CurrentManagedThreadId, record.ManagedThreadId);
            Assert.True(record.OsThreadId > 0);
            long allocated = record.AllocatedBytes, live = record.LiveBytes, count = record.Allocations, total = TrackedAllocator.TotalBytes;

            byte* p = TrackedAllocator.Alloc(1000);
            int charged = TrackedAllocator.ChargedSize(p);
            Assert.InRange(charged, 1000 + TrackedAllocator.HeaderSize, 1000 + TrackedAllocator.HeaderSize + 64);
            Assert.Equal((nuint)(charged - TrackedAllocator.HeaderSize), TrackedAllocator.UsableSize(p));
            new Span<byte>(p, (int)TrackedAllocator.UsableSize(p)).Fill(0xAB); // the whole usable size is ours to write
            Assert.Equal(allocated + charged, record.AllocatedBytes);
            Assert.Equal(live + charged, record.LiveBytes);
            Assert.Equal(count + 1, record.Allocations);
            Assert.Equal(total + charged, TrackedAllocator.TotalBytes);
            Assert.True(TrackedAllocator.PeakBytes >= TrackedAllocator.TotalBytes);

            TrackedAllocator.Free(p);
            Assert.Equal(allocated + charged, record.AllocatedBytes);
            Assert.Equal(live, record.LiveBytes);
            Assert.Equal(total, TrackedAllocator.TotalBytes);
        });
    }

    [Fact]
    public void AZeroedBlockIsZeroWhereAFreedOneWasWrittenAndIsChargedAsAnyOther()
    {
        using var thread = new DedicatedThread("alloc-zeroed");
        thread.Run(() =>
        {
            ThreadMemoryRecord record = TrackedAllocator.CurrentThread;
            // A small block, from memory the allocator is likely to hand back: written, freed, then
            // asked for zeroed; and a bucket array of 64 MB, which calloc takes as zero pages.
            foreach (nuint size in new nuint[] { 200, 64 << 20 })
            {
                byte* dirty = TrackedAllocator.Alloc(size);
                NativeMemoryFill(dirty, size, 0xCD);
                TrackedAllocator.Free(dirty);

                long live = record.LiveBytes, count = record.Allocations;
                byte* zeroed = TrackedAllocator.AllocZeroed(size);
                int charged = TrackedAllocator.ChargedSize(zeroed);
                Assert.True((nuint)charged >= size + TrackedAllocator.HeaderSize, $"{charged} bytes charged for {size}");
                Assert.Equal(live + charged, record.LiveBytes);
                Assert.Equal(count + 1, record.Allocations);
                for (nuint at = 0; at < size; at += at < 4096 ? 1u : 4093u)
                    Assert.True(zeroed[at] == 0, $"byte {at} of a zeroed block of {size} is {zeroed[at]}");
                Assert.Equal(0, zeroed[size - 1]);
                TrackedAllocator.Free(zeroed);
                Assert.Equal(live, record.LiveBytes);
            }
        });
    }

    private static void NativeMemoryFill(byte* p, nuint size, byte value) => System.Runtime.InteropServices.NativeMemory.Fill(p, size, value);

    [Fact]
    public void AFreeOnAnotherThreadIsChargedToTheOwner()
    {
        using var owner = new DedicatedThread("free-owner");
        using var other = new DedicatedThread("free-other");
        ThreadMemoryRecord ownerRecord = owner.Run(() => TrackedAllocator.CurrentThread);
        ThreadMemoryRecord otherRecord = other.Run(() => TrackedAllocator.CurrentThread);
        Assert.NotEqual(ownerRecord.Id, otherRecord.Id);

        nint block = owner.Run(() => (nint)TrackedAllocator.Alloc(4096));
        int charged = TrackedAllocator.ChargedSize((byte*)block);
        long ownerLive = ownerRecord.LiveBytes, ownerFreed = ownerRecord.FreedBytes, ownerFrees = ownerRecord.Frees;
        long otherFreed = otherRecord.FreedBytes, otherLive = otherRecord.LiveBytes;

        other.Run(() => TrackedAllocator.Free((byte*)block));

        Assert.Equal(ownerLive - charged, ownerRecord.LiveBytes);
        Assert.Equal(ownerFreed + charged, ownerRecord.FreedBytes);
        Assert.Equal(ownerFrees + 1, ownerRecord.Frees);
        Assert.Equal(otherFreed, otherRecord.FreedBytes);
        Assert.Equal(otherLive, otherRecord.LiveBytes);

        // The owner folds the remote frees into its own counters on its next allocation; the figures stay the same.
        long liveBefore = ownerRecord.LiveBytes;
        nint again = owner.Run(() => (nint)TrackedAllocator.Alloc(16));
        Assert.Equal(liveBefore + TrackedAllocator.ChargedSize((byte*)again), ownerRecord.LiveBytes);
        Assert.Equal(ownerFreed + charged, ownerRecord.FreedBytes);
        owner.Run(() => TrackedAllocator.Free((byte*)again));
        Assert.Equal(liveBefore, ownerRecord.LiveBytes);
    }

    [Fact]
    public void PerThreadLiveBytesAddUpToTheTotal()
    {
        var threads = new List<DedicatedThread>();
        var blocks = new List<nint>();
        try
        {
            for (int t = 0; t < 4; t++)
            {
                var thread = new DedicatedThread($"sum-{t}");
                threads.Add(thread);
                int size = 100 * (t + 1);
                blocks.AddRange(thread.Run(() => Enumerable.Range(0, 50).Select(i => (nint)TrackedAllocator.Alloc((nuint)(size + i))).ToList()));
            }
            // Free a third of them on threads that did not allocate them.
            for (int i = 0; i < blocks.Count; i += 3)
            {
                nint block = blocks[i];
                threads[(i + 1) % threads.Count].Run(() => TrackedAllocator.Free((byte*)block));
                blocks[i] = 0;
            }
            AssertRecordsAddUpToTotal();
        }
        finally
        {
            foreach (nint block in blocks)
                TrackedAllocator.Free((byte*)block);
            foreach (var thread in threads)
                thread.Dispose();
        }
        AssertRecordsAddUpToTotal();
    }

    private static void AssertRecordsAddUpToTotal()
    {
        long sum = 0;
        foreach (var record in ThreadMemoryRegistry.Snapshot())
            sum += record.LiveBytes;
        Assert.Equal(TrackedAllocator.TotalBytes, sum);
    }

    [Fact]
    public void AnExitedThreadsRecordStaysUntilReportedAndEmpty()
    {
        ThreadMemoryRecord? record = null;
        nint block = 0;
        var thread = new Thread(() =>
        {
            record = TrackedAllocator.CurrentThread;
            TrackedAllocator.NameCurrentThread("exiting allocator");
            block = (nint)TrackedAllocator.Alloc(2048);
        });
        thread.Start();
        thread.Join();
        Assert.NotNull(record);
        Assert.False(record.IsAlive);
        Assert.Equal("exiting allocator", record.Name);
        int charged = TrackedAllocator.ChargedSize((byte*)block);
        Assert.Equal(charged, record.LiveBytes);

        // Still holding memory: reported again and again.
        Assert.Contains(record, ThreadMemoryRegistry.Snapshot());
        Assert.Contains(record, ThreadMemoryRegistry.Snapshot());

        TrackedAllocator.Free((byte*)block);
        Assert.Equal(0, record.LiveBytes);
        // Already reported as exited and now empty: the next snapshot retires it.
        Assert.DoesNotContain(record, ThreadMemoryRegistry.Snapshot());
    }

    [Fact]
    public void AnExitedThreadWithNothingLiveIsReportedOnceMore()
    {
        ThreadMemoryRecord? record = null;
        var thread = new Thread(() =>
        {
            record = TrackedAllocator.CurrentThread;
            TrackedAllocator.Free(TrackedAllocator.Alloc(64));
        });
        thread.Start();
        thread.Join();
        Assert.NotNull(record);
        Assert.Equal(0, record.LiveBytes);
        Assert.True(record.AllocatedBytes > 0);
        Assert.Contains(record, ThreadMemoryRegistry.Snapshot());
        Assert.DoesNotContain(record, ThreadMemoryRegistry.Snapshot());
    }

    [Fact]
    public void ReallocKeepsTheDataAndMovesTheCharge()
    {
        using var owner = new DedicatedThread("realloc-owner");
        using var other = new DedicatedThread("realloc-other");
        ThreadMemoryRecord ownerRecord = owner.Run(() => TrackedAllocator.CurrentThread);
        ThreadMemoryRecord otherRecord = other.Run(() => TrackedAllocator.CurrentThread);
        long ownerLive = ownerRecord.LiveBytes, otherLive = otherRecord.LiveBytes, total = TrackedAllocator.TotalBytes;

        nint grown = owner.Run(() =>
        {
            byte* p = TrackedAllocator.Alloc(1000);
            for (int i = 0; i < 1000; i++)
                p[i] = (byte)(i * 31);
            byte* q = TrackedAllocator.Realloc(p, 50_000);
            Assert.True(TrackedAllocator.UsableSize(q) >= 50_000);
            for (int i = 0; i < 1000; i++)
                Assert.True(q[i] == (byte)(i * 31), $"byte {i} lost when growing");
            return (nint)q;
        });
        Assert.Equal(ownerLive + TrackedAllocator.ChargedSize((byte*)grown), ownerRecord.LiveBytes);

        // Shrinking on another thread: the new block is the other thread's, the old charge returns to the owner.
        nint shrunk = other.Run(() =>
        {
            byte* r = TrackedAllocator.Realloc((byte*)grown, 100);
            for (int i = 0; i < 100; i++)
                Assert.True(r[i] == (byte)(i * 31), $"byte {i} lost when shrinking");
            return (nint)r;
        });
        Assert.Equal(ownerLive, ownerRecord.LiveBytes);
        Assert.Equal(otherLive + TrackedAllocator.ChargedSize((byte*)shrunk), otherRecord.LiveBytes);
        Assert.Equal(total + TrackedAllocator.ChargedSize((byte*)shrunk), TrackedAllocator.TotalBytes);

        nint fromNull = other.Run(() => (nint)TrackedAllocator.Realloc(null, 10));
        Assert.True(TrackedAllocator.UsableSize((byte*)fromNull) >= 10);
        other.Run(() =>
        {
            TrackedAllocator.Free((byte*)shrunk);
            TrackedAllocator.Free((byte*)fromNull);
        });
        Assert.Equal(otherLive, otherRecord.LiveBytes);
        Assert.Equal(total, TrackedAllocator.TotalBytes);
    }

    [Fact]
    public void ReallocGrowingPastTheMmapThresholdKeepsTheContent()
    {
        const int oldSize = 64 * 1024;
        const int newSize = 1024 * 1024;
        byte* block = TrackedAllocator.Alloc(oldSize);
        for (int i = 0; i < oldSize; i++)
            block[i] = (byte)(i * 7);

        byte* grown = TrackedAllocator.Realloc(block, newSize);
        try
        {
            Assert.True(TrackedAllocator.UsableSize(grown) >= newSize);
            for (int i = 0; i < oldSize; i++)
                Assert.Equal((byte)(i * 7), grown[i]);
        }
        finally
        {
            TrackedAllocator.Free(grown);
        }
    }

    [Fact]
    public void EachThreadAddsItsShareToTheGlobalFigureOnlyPastTheThreshold()
    {
        using var thread = new DedicatedThread("batched-share");
        thread.Run(() =>
        {
            var record = TrackedAllocator.CurrentThread;
            // Start from a share near zero: one allocation past the threshold publishes it.
            TrackedAllocator.Free(TrackedAllocator.Alloc((nuint)TrackedAllocator.PublishThresholdBytes + 1));
            long share = record.UnpublishedBytes;
            Assert.InRange(share, -TrackedAllocator.PublishThresholdBytes, TrackedAllocator.PublishThresholdBytes);

            byte* small = TrackedAllocator.Alloc(100);
            int charged = TrackedAllocator.ChargedSize(small);
            if (share + charged <= TrackedAllocator.PublishThresholdBytes)
                Assert.Equal(share + charged, record.UnpublishedBytes); // kept, not published
            TrackedAllocator.Free(small);
            Assert.Equal(share, record.UnpublishedBytes);

            // Growth past the threshold is published: the share starts again from zero.
            var blocks = new List<nint>();
            while (record.UnpublishedBytes > share || blocks.Count == 0)
                blocks.Add((nint)TrackedAllocator.Alloc(4096));
            Assert.True(record.UnpublishedBytes < share + 4200, $"share {record.UnpublishedBytes} was not published");
            foreach (nint block in blocks)
                TrackedAllocator.Free((byte*)block);
            Assert.InRange(record.UnpublishedBytes, -TrackedAllocator.PublishThresholdBytes, TrackedAllocator.PublishThresholdBytes);
        });
    }

    [Fact]
    public void ARemoteFreeLowersTheFreeingThreadsShareAndTheOwnersLiveBytes()
    {
        using var owner = new DedicatedThread("share-owner");
        using var other = new DedicatedThread("share-other");
        var ownerRecord = owner.Run(() => TrackedAllocator.CurrentThread);
        var otherRecord = other.Run(() => TrackedAllocator.CurrentThread);
        nint block = owner.Run(() => (nint)TrackedAllocator.Alloc(1000));
        int charged = TrackedAllocator.ChargedSize((byte*)block);
        long ownerLive = ownerRecord.LiveBytes, otherShare = otherRecord.UnpublishedBytes, otherLive = otherRecord.LiveBytes;

        other.Run(() => TrackedAllocator.Free((byte*)block));

        Assert.Equal(ownerLive - charged, ownerRecord.LiveBytes);
        Assert.Equal(otherLive, otherRecord.LiveBytes);
        long expected = otherShare - charged;
        Assert.True(otherRecord.UnpublishedBytes == expected || expected < -TrackedAllocator.PublishThresholdBytes && otherRecord.UnpublishedBytes == 0,
            $"the freeing thread's share is {otherRecord.UnpublishedBytes}, expected {expected}");
    }

    [Fact]
    public void TheCheckNearALimitIsExactAndFarFromItCheap()
    {
        using var thread = new DedicatedThread("near-limit");
        thread.Run(() =>
        {
            long slack = TrackedAllocator.PublishThresholdBytes * (ThreadMemoryRegistry.Count + 1);
            long exact = TrackedAllocator.TotalBytes;
            // Far above the total: the published figure (plus this thread's share) answers, within the slack of the exact sum.
            long approximate = TrackedAllocator.TotalBytesNear(long.MaxValue / 2);
            Assert.True(Math.Abs(approximate - exact) <= slack + 1024 * 1024, $"approximate {approximate} against exact {exact}, slack {slack}");
            // At the total itself: the records are summed.
            byte* block = TrackedAllocator.Alloc(10_000);
            try
            {
                long held = TrackedAllocator.TotalBytes;
                long near = TrackedAllocator.TotalBytesNear(held);
                Assert.True(Math.Abs(near - held) < 1024 * 1024, $"near the limit {near} against exact {held}");
                Assert.True(TrackedAllocator.PeakBytes >= held);
            }
            finally
            {
                TrackedAllocator.Free(block);
            }
        });
    }

    [Fact]
    public void AnExitedThreadsShareIsPublishedWhenItsRecordRetires()
    {
        ThreadMemoryRecord? record = null;
        nint block = 0;
        var thread = new Thread(() =>
        {
            record = TrackedAllocator.CurrentThread;
            block = (nint)TrackedAllocator.Alloc(512);
        });
        thread.Start();
        thread.Join();
        Assert.NotNull(record);
        Assert.True(record.UnpublishedBytes > 0);
        TrackedAllocator.Free((byte*)block);
        ThreadMemoryRegistry.Snapshot();
        ThreadMemoryRegistry.Snapshot();
        Assert.Equal(0, record.UnpublishedBytes);
    }

    [Fact]
    public void PeakCoversAShortLivedLargeBlock()
    {
        byte* big = TrackedAllocator.Alloc(4 * 1024 * 1024);
        long during = TrackedAllocator.TotalBytes;
        TrackedAllocator.Free(big);
        Assert.True(TrackedAllocator.PeakBytes >= during);
    }
}
