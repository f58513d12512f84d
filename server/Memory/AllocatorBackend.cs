using System.Runtime.InteropServices;

namespace Diagnostics.Server.Memory;

/// <summary>Which C allocator serves the tracked allocator's blocks (the <c>allocator</c> setting).</summary>
public enum AllocatorChoice
{
    /// <summary>The best one present, in the order the benchmarks measured (README, Memory allocator): mimalloc, else glibc.</summary>
    Auto,
    Glibc,
    Jemalloc,
    Mimalloc,
}

/// <summary>
/// What a C allocator says about itself, in bytes, with Redis's meanings (INFO memory's
/// allocator_allocated / allocator_active / allocator_resident).
/// </summary>
/// <param name="Allocated">Handed out and not freed.</param>
/// <param name="Active">In pages the allocator uses for blocks (handed out or free between them).</param>
/// <param name="Resident">Held from the system and resident (or its best upper bound).</param>
public readonly record struct AllocatorFigures(long Allocated, long Active, long Resident);

/// <summary>
/// One C allocator the tracked allocator can sit on: its malloc, calloc, free and usable-size entry points
/// (called through function pointers, no marshalling), and what it reports about itself.
/// Blocks remember which backend served them (<see cref="Tag"/>, in the block header), so a free
/// always reaches the allocator that made the block.
/// </summary>
public abstract unsafe class AllocatorBackend
{
    /// <summary>Backends by tag, filled as they are opened (at most one instance of each).</summary>
    private static readonly AllocatorBackend?[] s_byTag = new AllocatorBackend?[4];
    private static readonly Lock s_gate = new();

    protected AllocatorBackend(AllocatorChoice kind) => Kind = kind;

    public AllocatorChoice Kind { get; }

    /// <summary>Small number stored in each block's header; <see cref="AllocatorChoice.Glibc"/> is 0.</summary>
    internal int Tag => (int)Kind - 1;

    /// <summary>As INFO's mem_allocator gives it: "libc", "jemalloc-5.3.0", "mimalloc-2.0.9".</summary>
    public abstract string Name { get; }

    internal delegate* unmanaged[SuppressGCTransition]<nuint, void*> Malloc { get; init; }
    /// <summary>calloc(count, size): zeroed memory, big blocks as untouched zero pages.</summary>
    internal delegate* unmanaged[SuppressGCTransition]<nuint, nuint, void*> Calloc { get; init; }
    internal delegate* unmanaged[SuppressGCTransition]<void*, void> Free { get; init; }
    internal delegate* unmanaged[SuppressGCTransition]<void*, nuint> UsableSize { get; init; }

    /// <summary>
    /// Whether the allocator's figures cover only the tracked allocator's blocks (a library of its
    /// own) or the whole process's C heap (glibc, which the runtime also allocates from).
    /// </summary>
    public abstract bool ServesOnlyTrackedBlocks { get; }

    /// <summary>The allocator's own figures; false where it has none.</summary>
    public abstract bool TryReadFigures(out AllocatorFigures figures);

    /// <summary>Gives free memory back to the system (Redis's MEMORY PURGE); false where it cannot.</summary>
    public abstract bool Purge();

    /// <summary>The allocator's own statistics report, for MEMORY MALLOC-STATS (empty when it has none).</summary>
    public abstract string StatisticsReport();

    internal static AllocatorBackend ByTag(int tag) => s_byTag[tag]!;

    /// <summary>glibc (or the platform's C runtime): always present.</summary>
    public static AllocatorBackend Glibc => Register(s_glibc ??= new GlibcBackend());
    private static GlibcBackend? s_glibc;

    /// <summary>
    /// Opens the chosen allocator. When its library is absent or cannot be loaded, the C
    /// runtime's allocator serves instead and <paramref name="problem"/> says why, for the log.
    /// <paramref name="libraryOverride"/> replaces the library's file name (tests use a missing one).
    /// </summary>
    public static AllocatorBackend Open(AllocatorChoice choice, out string? problem, string? libraryOverride = null)
    {
        problem = null;
        switch (choice)
        {
            case AllocatorChoice.Glibc:
                return Glibc;
            case AllocatorChoice.Jemalloc:
                if (JemallocBackend.TryOpen(libraryOverride ?? JemallocBackend.Library, out var jemalloc, out problem))
                    return Register(jemalloc);
                break;
            case AllocatorChoice.Mimalloc:
                if (MimallocBackend.TryOpen(libraryOverride ?? MimallocBackend.Library, out var mimalloc, out problem))
                    return Register(mimalloc);
                break;
            default:
                foreach (var preferred in AutoOrder)
                {
                    var opened = preferred == AllocatorChoice.Glibc ? Glibc : Open(preferred, out _, libraryOverride);
                    if (opened.Kind == preferred)
                        return opened;
                }
                return Glibc;
        }
        problem = $"allocator {choice.ToString().ToLowerInvariant()} is not available ({problem}); using {Glibc.Name}";
        return Glibc;
    }

    /// <summary>
    /// What <see cref="AllocatorChoice.Auto"/> tries, best first (measured in README, Memory
    /// allocator): mimalloc, whose frees from another thread (every free of a block another
    /// connection's thread made, in inline mode) cost about half glibc's, at the same memory; then
    /// glibc. jemalloc is not tried: it was no faster than glibc here and needs the process
    /// started with spare static TLS.
    /// </summary>
    internal static readonly AllocatorChoice[] AutoOrder = [AllocatorChoice.Mimalloc, AllocatorChoice.Glibc];

    private static AllocatorBackend Register(AllocatorBackend backend)
    {
        lock (s_gate)
        {
            // One instance per kind: a second open returns the first, whose blocks may be live.
            if (s_byTag[backend.Tag] is { } existing)
                return existing;
            s_byTag[backend.Tag] = backend;
            return backend;
        }
    }

    /// <summary>Looks an export up, or says which one is missing.</summary>
    protected static bool TryExport(nint library, string name, out nint address, ref string? problem)
    {
        if (NativeLibrary.TryGetExport(library, name, out address))
            return true;
        problem ??= $"the library has no {name}";
        return false;
    }
}
