using System.Runtime.InteropServices;

namespace Diagnostics.Server.Memory;

/// <summary>
/// The usable size of a block the C runtime handed out, so accounting charges what the process
/// really holds (as Redis's zmalloc_size does), not what was asked for.
/// </summary>
internal static unsafe class NativeBlockSize
{
    private static readonly delegate* unmanaged<void*, nuint> s_usableSize = Resolve();

    public static nuint Of(void* block, nuint requested)
        => s_usableSize != null ? s_usableSize(block) : requested;

    private static delegate* unmanaged<void*, nuint> Resolve()
    {
        // NativeMemory.Alloc is malloc on Unix and the UCRT's malloc on Windows.
        (string library, string export) = OperatingSystem.IsWindows()
            ? ("ucrtbase", "_msize")
            : OperatingSystem.IsMacOS() ? ("libc", "malloc_size") : ("libc", "malloc_usable_size");
        if (NativeLibrary.TryLoad(library, out nint handle) && NativeLibrary.TryGetExport(handle, export, out nint fn))
            return (delegate* unmanaged<void*, nuint>)fn;
        return null;
    }
}
