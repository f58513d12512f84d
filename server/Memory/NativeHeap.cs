using System.Runtime.InteropServices;

namespace Diagnostics.Server.Memory;

/// <summary>
/// What the C runtime's allocator itself reports, for the whole process (the runtime's own
/// native allocations included): glibc's mallinfo2 and malloc_trim. Elsewhere these are absent
/// and <see cref="TryRead"/> says so, so callers fall back as Redis does without jemalloc.
/// <see cref="GlibcBackend"/> reads it; the process's C heap is glibc's whatever backend the
/// tracked allocator uses, so it is also reported beside the others.
/// </summary>
public static unsafe class NativeHeap
{
    [StructLayout(LayoutKind.Sequential)]
    private struct MallInfo2
    {
        public nuint Arena;    // bytes of non-mmapped heap obtained from the system
        public nuint Ordblks;
        public nuint Smblks;
        public nuint Hblks;
        public nuint Hblkhd;   // bytes in mmapped blocks
        public nuint Usmblks;
        public nuint Fsmblks;
        public nuint Uordblks; // bytes in use in the heap
        public nuint Fordblks; // bytes free in the heap
        public nuint Keepcost;
    }

    private static readonly delegate* unmanaged<MallInfo2> s_mallinfo2;
    private static readonly delegate* unmanaged<nuint, int> s_mallocTrim;

    static NativeHeap()
    {
        if (!OperatingSystem.IsLinux() || !NativeLibrary.TryLoad("libc.so.6", out nint libc))
            return;
        if (NativeLibrary.TryGetExport(libc, "mallinfo2", out nint info))
            s_mallinfo2 = (delegate* unmanaged<MallInfo2>)info;
        if (NativeLibrary.TryGetExport(libc, "malloc_trim", out nint trim))
            s_mallocTrim = (delegate* unmanaged<nuint, int>)trim;
    }

    /// <summary>The allocator's figures, in bytes.</summary>
    /// <param name="InUse">Handed out and not freed: heap chunks in use plus mmapped blocks.</param>
    /// <param name="Held">Obtained from the system: the heap (in use or free) plus mmapped blocks.</param>
    /// <param name="Free">Free chunks the heap keeps for reuse.</param>
    /// <param name="Mapped">Large blocks served by their own mmap.</param>
    public readonly record struct Figures(long InUse, long Held, long Free, long Mapped, long TopReleasable);

    /// <summary>Reads mallinfo2 (it walks every arena under its lock: for admin commands, not the data path).</summary>
    public static bool TryRead(out Figures figures)
    {
        if (s_mallinfo2 == null)
        {
            figures = default;
            return false;
        }
        MallInfo2 info = s_mallinfo2();
        figures = new Figures(
            InUse: (long)(info.Uordblks + info.Hblkhd),
            Held: (long)(info.Arena + info.Hblkhd),
            Free: (long)info.Fordblks,
            Mapped: (long)info.Hblkhd,
            TopReleasable: (long)info.Keepcost);
        return true;
    }

    /// <summary>Gives free heap memory back to the system (malloc_trim(0)); false where the C runtime has no such call.</summary>
    public static bool Trim()
    {
        if (s_mallocTrim == null)
            return false;
        s_mallocTrim(0); // its result only says whether anything was released
        return true;
    }
}
