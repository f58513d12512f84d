using System.Globalization;
using System.Runtime.InteropServices;
using System.Text;

namespace Diagnostics.Server.Memory;

/// <summary>
/// mimalloc from its shared library (Debian's libmimalloc2.0), loaded beside glibc: only the
/// tracked allocator's blocks come from it. Its release build keeps no byte counts of blocks in
/// use, so the allocated figure is the tracked total (every block it serves is a tracked block,
/// charged at its usable size); active is what it has committed, and resident is bounded by that.
/// </summary>
internal sealed unsafe class MimallocBackend : AllocatorBackend
{
    public const string Library = "libmimalloc.so.2";

    private readonly delegate* unmanaged<nuint*, nuint*, nuint*, nuint*, nuint*, nuint*, nuint*, nuint*, void> _processInfo;
    private readonly delegate* unmanaged<byte, void> _collect;
    private readonly delegate* unmanaged<delegate* unmanaged<byte*, void*, void>, void*, void> _statsPrint;
    private readonly Lock _statsGate = new();

    private MimallocBackend(nint library, int version) : base(AllocatorChoice.Mimalloc)
    {
        Malloc = (delegate* unmanaged[SuppressGCTransition]<nuint, void*>)NativeLibrary.GetExport(library, "mi_malloc");
        Calloc = (delegate* unmanaged[SuppressGCTransition]<nuint, nuint, void*>)NativeLibrary.GetExport(library, "mi_calloc");
        Free = (delegate* unmanaged[SuppressGCTransition]<void*, void>)NativeLibrary.GetExport(library, "mi_free");
        UsableSize = (delegate* unmanaged[SuppressGCTransition]<void*, nuint>)NativeLibrary.GetExport(library, "mi_usable_size");
        _processInfo = (delegate* unmanaged<nuint*, nuint*, nuint*, nuint*, nuint*, nuint*, nuint*, nuint*, void>)NativeLibrary.GetExport(library, "mi_process_info");
        _collect = (delegate* unmanaged<byte, void>)NativeLibrary.GetExport(library, "mi_collect");
        _statsPrint = (delegate* unmanaged<delegate* unmanaged<byte*, void*, void>, void*, void>)NativeLibrary.GetExport(library, "mi_stats_print_out");
        // mi_version answers e.g. 209 for 2.0.9.
        Version = string.Create(CultureInfo.InvariantCulture, $"{version / 100}.{version / 10 % 10}.{version % 10}");
    }

    public string Version { get; }

    public override string Name => "mimalloc-" + Version;

    public override bool ServesOnlyTrackedBlocks => true;

    internal static bool TryOpen(string library, out MimallocBackend backend, out string? problem)
    {
        backend = null!;
        problem = null;
        if (!OperatingSystem.IsLinux())
        {
            problem = "mimalloc is loaded from Debian's libmimalloc2.0, on Linux only";
            return false;
        }
        if (!NativeLibrary.TryLoad(library, out nint handle))
        {
            problem = $"{library} could not be loaded (install libmimalloc2.0)";
            return false;
        }
        foreach (string export in (string[])["mi_malloc", "mi_free", "mi_usable_size", "mi_version", "mi_process_info", "mi_collect", "mi_stats_print_out"])
            if (!TryExport(handle, export, out _, ref problem))
                return false;
        int version = ((delegate* unmanaged<int>)NativeLibrary.GetExport(handle, "mi_version"))();
        backend = new MimallocBackend(handle, version);
        return true;
    }

    public override bool TryReadFigures(out AllocatorFigures figures)
    {
        nuint elapsed, user, system, rss, peakRss, commit, peakCommit, faults;
        _processInfo(&elapsed, &user, &system, &rss, &peakRss, &commit, &peakCommit, &faults);
        long allocated = TrackedAllocator.TotalBytes;
        figures = new AllocatorFigures(allocated, Math.Max((long)commit, allocated), Math.Max((long)commit, allocated));
        return true;
    }

    /// <summary>mi_collect(force): frees what the calling thread's heap and the abandoned segments can give back.</summary>
    public override bool Purge()
    {
        _collect(1);
        return true;
    }

    public override string StatisticsReport()
    {
        var text = new StringBuilder(4096);
        var handle = GCHandle.Alloc(text);
        try
        {
            lock (_statsGate)
                _statsPrint(&Append, (void*)GCHandle.ToIntPtr(handle));
        }
        finally
        {
            handle.Free();
        }
        return text.ToString();
    }

    [UnmanagedCallersOnly]
    private static void Append(byte* message, void* state)
        => ((StringBuilder)GCHandle.FromIntPtr((nint)state).Target!).Append(Marshal.PtrToStringUTF8((nint)message));
}
