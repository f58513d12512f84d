using System.Runtime.InteropServices;

namespace Diagnostics.Monitor.Linux;

/// <summary>
/// The few libc calls .NET has no API for: tracefs's per-CPU ring buffers must be read with a
/// non-blocking read(2) (FileStream neither opens with O_NONBLOCK nor reads a file that refuses
/// to seek), and tracefs may have to be mounted.
/// </summary>
internal static partial class Libc
{
    public const int ReadOnly = 0;
    public const int NonBlocking = 0x800;
    public const int CloseOnExec = 0x80000;
    public const int WouldBlock = 11;      // EAGAIN
    public const int Interrupted = 4;      // EINTR

    [LibraryImport("libc", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int open(string path, int flags);

    [LibraryImport("libc", SetLastError = true)]
    public static unsafe partial nint read(int fd, byte* buffer, nint count);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int close(int fd);

    [LibraryImport("libc")]
    public static partial uint geteuid();

    [LibraryImport("libc", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int mount(string source, string target, string fileSystemType, nuint flags, nint data);

    public static string ErrorText(int errno) => Marshal.GetPInvokeErrorMessage(errno);
}
