using System.Runtime.InteropServices;
using System.Text;

namespace Diagnostics.Server.Memory;

/// <summary>
/// jemalloc from its shared library (Debian's libjemalloc2), loaded beside glibc: only the tracked
/// allocator's blocks come from it, so its statistics are the tracked blocks' (as Redis's are).
/// The library uses static TLS: loaded after start (dlopen) it needs glibc's spare static TLS to
/// be large enough, which it is not by default; start the server with
/// <c>GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096</c> or with the library in LD_PRELOAD.
/// </summary>
internal sealed unsafe class JemallocBackend : AllocatorBackend
{
    public const string Library = "libjemalloc.so.2";
    /// <summary>jemalloc's MALLCTL_ARENAS_ALL: "every arena" in an arena.&lt;i&gt; name.</summary>
    private const int AllArenas = 4096;

    private readonly delegate* unmanaged<byte*, void*, nuint*, void*, nuint, int> _mallctl;
    private readonly delegate* unmanaged<delegate* unmanaged<void*, byte*, void>, void*, byte*, void> _statsPrint;
    private readonly Lock _statsGate = new();

    private JemallocBackend(nint library, string version) : base(AllocatorChoice.Jemalloc)
    {
        Malloc = (delegate* unmanaged[SuppressGCTransition]<nuint, void*>)NativeLibrary.GetExport(library, "malloc");
        Calloc = (delegate* unmanaged[SuppressGCTransition]<nuint, nuint, void*>)NativeLibrary.GetExport(library, "calloc");
        Free = (delegate* unmanaged[SuppressGCTransition]<void*, void>)NativeLibrary.GetExport(library, "free");
        UsableSize = (delegate* unmanaged[SuppressGCTransition]<void*, nuint>)NativeLibrary.GetExport(library, "malloc_usable_size");
        _mallctl = (delegate* unmanaged<byte*, void*, nuint*, void*, nuint, int>)NativeLibrary.GetExport(library, "mallctl");
        _statsPrint = (delegate* unmanaged<delegate* unmanaged<void*, byte*, void>, void*, byte*, void>)NativeLibrary.GetExport(library, "malloc_stats_print");
        Version = version;
    }

    /// <summary>jemalloc's version string, e.g. "5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c".</summary>
    public string Version { get; }

    /// <summary>As Redis names it: "jemalloc-5.3.0".</summary>
    public override string Name => "jemalloc-" + Version.Split('-')[0];

    public override bool ServesOnlyTrackedBlocks => true;

    internal static bool TryOpen(string library, out JemallocBackend backend, out string? problem)
    {
        backend = null!;
        problem = null;
        if (!OperatingSystem.IsLinux())
        {
            problem = "jemalloc is loaded from Debian's libjemalloc2, on Linux only";
            return false;
        }
        nint handle;
        try
        {
            handle = NativeLibrary.Load(library);
        }
        catch (DllNotFoundException ex)
        {
            problem = ex.Message.Contains("static TLS", StringComparison.Ordinal)
                ? $"{library} needs more static TLS than glibc keeps spare: start the server with GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096, or with {library} in LD_PRELOAD"
                : $"{library} could not be loaded (install libjemalloc2)";
            return false;
        }
        foreach (string export in (string[])["malloc", "free", "malloc_usable_size", "mallctl", "malloc_stats_print"])
            if (!TryExport(handle, export, out _, ref problem))
                return false;
        var mallctl = (delegate* unmanaged<byte*, void*, nuint*, void*, nuint, int>)NativeLibrary.GetExport(handle, "mallctl");
        byte* version = null;
        nuint length = (nuint)sizeof(byte*);
        fixed (byte* name = "version\0"u8)
        {
            if (mallctl(name, &version, &length, null, 0) != 0 || version == null)
            {
                problem = $"{library} did not answer mallctl(\"version\")";
                return false;
            }
        }
        backend = new JemallocBackend(handle, Marshal.PtrToStringUTF8((nint)version) ?? "unknown");
        return true;
    }

    /// <summary>After an "epoch" refresh (jemalloc caches its statistics until asked), as Redis reads them.</summary>
    public override bool TryReadFigures(out AllocatorFigures figures)
    {
        figures = default;
        ulong epoch = 1;
        nuint epochLength = sizeof(ulong);
        fixed (byte* name = "epoch\0"u8)
            if (_mallctl(name, &epoch, &epochLength, &epoch, epochLength) != 0)
                return false;
        if (!TryRead("stats.allocated\0"u8, out long allocated) || !TryRead("stats.active\0"u8, out long active) || !TryRead("stats.resident\0"u8, out long resident))
            return false;
        figures = new AllocatorFigures(allocated, active, resident);
        return true;
    }

    private bool TryRead(ReadOnlySpan<byte> name, out long value)
    {
        nuint result = 0, length = (nuint)sizeof(nuint);
        fixed (byte* text = name)
        {
            int error = _mallctl(text, &result, &length, null, 0);
            value = (long)result;
            return error == 0;
        }
    }

    /// <summary>Purges every arena's dirty pages, as Redis's MEMORY PURGE does.</summary>
    public override bool Purge()
    {
        byte[] name = Encoding.ASCII.GetBytes($"arena.{AllArenas}.purge\0");
        fixed (byte* text = name)
            return _mallctl(text, null, null, null, 0) == 0;
    }

    /// <summary>jemalloc's malloc_stats_print, as Redis's MEMORY MALLOC-STATS prints it.</summary>
    public override string StatisticsReport()
    {
        var text = new StringBuilder(64 * 1024);
        var handle = GCHandle.Alloc(text);
        try
        {
            lock (_statsGate)
                _statsPrint(&Append, (void*)GCHandle.ToIntPtr(handle), null);
        }
        finally
        {
            handle.Free();
        }
        return text.ToString();
    }

    [UnmanagedCallersOnly]
    private static void Append(void* state, byte* message)
        => ((StringBuilder)GCHandle.FromIntPtr((nint)state).Target!).Append(Marshal.PtrToStringUTF8((nint)message));
}
