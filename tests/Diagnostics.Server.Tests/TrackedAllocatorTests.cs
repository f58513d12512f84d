using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The allocator's block header is [owner thread id:int][charged bytes:int]. Sizes must be read
/// from the second field: reading the owner id as a size made Realloc copy the NEW size out of
/// the old block, which crashed the server once a request batch grew past 64 KiB.
/// </summary>
public sealed unsafe class TrackedAllocatorTests
{
    [Fact]
    public void UsableAndChargedSizesComeFromTheHeadersSizeField()
    {
        byte* block = TrackedAllocator.Alloc(1000);
        try
        {
            Assert.True(TrackedAllocator.UsableSize(block) >= 1000);
            Assert.Equal((long)TrackedAllocator.UsableSize(block) + TrackedAllocator.HeaderSize, TrackedAllocator.ChargedSize(block));
        }
        finally
        {
            TrackedAllocator.Free(block);
        }
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
}
