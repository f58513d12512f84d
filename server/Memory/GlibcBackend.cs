using System.Runtime.InteropServices;
using System.Text;

namespace Diagnostics.Server.Memory;

/// <summary>
/// The C runtime's own allocator: glibc's malloc on Linux (the UCRT's on Windows, libSystem's on
/// macOS). It also serves the .NET runtime's native allocations, so its figures are the whole
/// process's C heap, not only the tracked blocks.
/// </summary>
internal sealed unsafe class GlibcBackend : AllocatorBackend
{
    public GlibcBackend() : base(AllocatorChoice.Glibc)
    {
        (string library, string usableSize) = OperatingSystem.IsWindows()
            ? ("ucrtbase", "_msize")
            : OperatingSystem.IsMacOS() ? ("libc", "malloc_size") : ("libc.so.6", "malloc_usable_size");
        nint handle = NativeLibrary.Load(library);
        Malloc = (delegate* unmanaged[SuppressGCTransition]<nuint, void*>)NativeLibrary.GetExport(handle, "malloc");
        Calloc = (delegate* unmanaged[SuppressGCTransition]<nuint, nuint, void*>)NativeLibrary.GetExport(handle, "calloc");
        Free = (delegate* unmanaged[SuppressGCTransition]<void*, void>)NativeLibrary.GetExport(handle, "free");
        UsableSize = (delegate* unmanaged[SuppressGCTransition]<void*, nuint>)NativeLibrary.GetExport(handle, usableSize);
    }

    /// <summary>Redis's name for a build on the C runtime's malloc.</summary>
    public override string Name => "libc";

    public override bool ServesOnlyTrackedBlocks => false;

    /// <summary>
    /// mallinfo2 (walks every arena under its lock: for admin reads, not the data path). glibc does
    /// not say how much of its heap is resident; the heap it holds is the honest upper bound, so
    /// active and resident are both that.
    /// </summary>
    public override bool TryReadFigures(out AllocatorFigures figures)
    {
        if (!NativeHeap.TryRead(out var heap))
        {
            figures = default;
            return false;
        }
        figures = new AllocatorFigures(heap.InUse, heap.Held, heap.Held);
        return true;
    }

    public override bool Purge() => NativeHeap.Trim();

    public override string StatisticsReport()
    {
        if (!NativeHeap.TryRead(out var heap))
            return "C allocator statistics are not available on this platform\n";
        var text = new StringBuilder();
        text.Append("C allocator, whole process (mallinfo2; the runtime's own native allocations included):\n");
        Line(text, "in_use", heap.InUse);
        Line(text, "held_from_system", heap.Held);
        Line(text, "free_in_heap", heap.Free);
        Line(text, "mmapped", heap.Mapped);
        Line(text, "releasable_at_top", heap.TopReleasable);
        return text.ToString();
    }

    private static void Line(StringBuilder text, string name, long value)
        => text.Append(name).Append(": ").Append(value.ToString(System.Globalization.CultureInfo.InvariantCulture)).Append('\n');
}
