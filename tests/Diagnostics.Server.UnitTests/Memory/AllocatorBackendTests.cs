using Diagnostics.Server.Memory;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The C allocators under the tracked allocator: the chosen one serves new blocks, glibc serves
/// when the chosen library is absent (with the reason), blocks of different allocators live side
/// by side and each free reaches the allocator that made the block, and each reports figures.
/// mimalloc is loaded in this process (Debian's libmimalloc2.0, installed by .ci/run); jemalloc
/// needs static TLS given at process start, so its own test runs a server (AllocatorSettingTests).
/// </summary>
[Collection(NativeMemoryCollection.Name)]
public sealed unsafe class AllocatorBackendTests
{
    [Theory]
    [InlineData(AllocatorChoice.Jemalloc)]
    [InlineData(AllocatorChoice.Mimalloc)]
    public void AMissingLibraryFallsBackToGlibcAndSaysWhy(AllocatorChoice choice)
    {
        var backend = AllocatorBackend.Open(choice, out string? problem, libraryOverride: "libdiagnostics-absent.so.9");
        Assert.Equal(AllocatorChoice.Glibc, backend.Kind);
        Assert.Equal("libc", backend.Name);
        Assert.NotNull(problem);
        Assert.Contains($"allocator {choice.ToString().ToLowerInvariant()} is not available", problem);
        Assert.Contains("libdiagnostics-absent.so.9", problem);
        Assert.EndsWith("using libc", problem);
    }

    [Fact]
    public void AutoWithNoLibraryPresentIsGlibcWithoutComplaint()
    {
        var backend = AllocatorBackend.Open(AllocatorChoice.Auto, out string? problem, libraryOverride: "libdiagnostics-absent.so.9");
        Assert.Equal(AllocatorChoice.Glibc, backend.Kind);
        Assert.Null(problem);
    }

    [Fact]
    public void GlibcIsAlwaysThereAndReportsTheProcessHeap()
    {
        var glibc = AllocatorBackend.Open(AllocatorChoice.Glibc, out string? problem);
        Assert.Null(problem);
        Assert.Equal("libc", glibc.Name);
        Assert.False(glibc.ServesOnlyTrackedBlocks);
        Assert.True(glibc.TryReadFigures(out var figures));
        Assert.True(figures.Allocated > 0);
        Assert.True(figures.Active >= figures.Allocated);
        Assert.Contains("mallinfo2", glibc.StatisticsReport());
    }

    [Fact]
    public void MimallocServesBlocksBesideGlibcAndEachFreeReachesItsOwnAllocator()
    {
        var mimalloc = AllocatorBackend.Open(AllocatorChoice.Mimalloc, out string? problem);
        Assert.True(problem is null, $"libmimalloc2.0 must be installed for this test (.ci/run installs it): {problem}");
        Assert.Matches(@"^mimalloc-\d+\.\d+\.\d+$", mimalloc.Name);
        Assert.True(mimalloc.ServesOnlyTrackedBlocks);

        using var thread = new DedicatedThread("backend-mix");
        thread.Run(() =>
        {
            var before = TrackedAllocator.Backend;
            var record = TrackedAllocator.CurrentThread;
            long live = record.LiveBytes;
            byte* fromGlibc = TrackedAllocator.Alloc(300);
            TrackedAllocator.Use(mimalloc);
            try
            {
                Assert.Same(mimalloc, TrackedAllocator.Backend);
                byte* fromMimalloc = TrackedAllocator.Alloc(300);
                // mimalloc's size classes: 300 + 8 bytes of header land in its 320-byte class.
                Assert.Equal(320, TrackedAllocator.ChargedSize(fromMimalloc));
                new Span<byte>(fromMimalloc, (int)TrackedAllocator.UsableSize(fromMimalloc)).Fill(0x5A);
                byte* grown = TrackedAllocator.Realloc(fromGlibc, 100_000); // glibc's block moves to mimalloc
                Assert.True(TrackedAllocator.UsableSize(grown) >= 100_000);
                Assert.Equal(live + TrackedAllocator.ChargedSize(fromMimalloc) + TrackedAllocator.ChargedSize(grown), record.LiveBytes);
                Assert.True(mimalloc.TryReadFigures(out var figures));
                Assert.True(figures.Active >= figures.Allocated);
                Assert.Contains("committed", mimalloc.StatisticsReport());
                TrackedAllocator.Use(before);
                // Each block goes back to its own allocator whichever serves new ones now.
                TrackedAllocator.Free(fromMimalloc);
                TrackedAllocator.Free(grown);
            }
            finally
            {
                TrackedAllocator.Use(before);
            }
            Assert.Equal(live, record.LiveBytes);
        });
    }

    [Fact]
    public void AutoPrefersMimallocThenGlibc()
    {
        Assert.Equal([AllocatorChoice.Mimalloc, AllocatorChoice.Glibc], AllocatorBackend.AutoOrder);
        var backend = AllocatorBackend.Open(AllocatorChoice.Auto, out string? problem);
        Assert.Null(problem);
        Assert.Equal(AllocatorChoice.Mimalloc, backend.Kind); // installed by .ci/run
    }

    [Fact]
    public void OpeningTheSameAllocatorTwiceGivesTheSameBackend()
    {
        var first = AllocatorBackend.Open(AllocatorChoice.Mimalloc, out _);
        var second = AllocatorBackend.Open(AllocatorChoice.Mimalloc, out _);
        Assert.Same(first, second);
        Assert.Same(AllocatorBackend.Glibc, AllocatorBackend.Open(AllocatorChoice.Glibc, out _));
    }
}
