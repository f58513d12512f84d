using System.Globalization;
using System.Runtime.InteropServices;

namespace Diagnostics.Monitor.Linux;

/// <summary>
/// The block device under a directory: its mount's device numbers (statx), lifted from a
/// partition to its disk, because request tracepoints report the whole disk once a request is
/// remapped. A directory on tmpfs or overlay has no block device (major 0).
/// </summary>
public static partial class BlockDevice
{
    private const int AtCurrentDirectory = -100;
    private const uint StatxBasic = 0x7ff;

    [LibraryImport("libc", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static unsafe partial int statx(int directoryFd, string path, int flags, uint mask, byte* buffer);

    /// <summary>The disk's name ("vda") and its dev_t as the kernel's tracepoints print it (major &lt;&lt; 20 | minor), or null.</summary>
    public static unsafe (string Name, long KernelDev)? Under(string directory)
    {
        byte* buffer = stackalloc byte[256];
        if (statx(AtCurrentDirectory, directory, 0, StatxBasic, buffer) != 0)
            throw new IOException($"cannot stat {directory}: {Marshal.GetPInvokeErrorMessage(Marshal.GetLastPInvokeError())}");
        uint major = *(uint*)(buffer + 136), minor = *(uint*)(buffer + 140);
        if (major == 0)
            return null;
        string sys = $"/sys/dev/block/{major}:{minor}";
        if (!Directory.Exists(sys))
            return null;
        if (File.Exists(Path.Combine(sys, "partition")))
        {
            var parent = File.ReadAllText(Path.Combine(sys, "..", "dev")).Trim().Split(':');
            major = uint.Parse(parent[0], CultureInfo.InvariantCulture);
            minor = uint.Parse(parent[1], CultureInfo.InvariantCulture);
            sys = $"/sys/dev/block/{major}:{minor}";
        }
        string name = Path.GetFileName(new DirectoryInfo(sys).LinkTarget ?? sys);
        return (name, ((long)major << 20) | minor);
    }
}
