using System.Runtime.InteropServices;

namespace Diagnostics.Monitor.Linux;

/// <summary>
/// The few libc calls .NET has no API for: tracefs's per-CPU ring buffers must be read with a
/// non-blocking read(2) (FileStream neither opens with O_NONBLOCK nor reads a file that refuses
/// to seek), tracefs may have to be mounted, and the announcement's checks need a file's owner
/// without following a symbolic link (statx) and a folder's real path (realpath).
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

    [LibraryImport("libc", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static unsafe partial int statx(int directoryFd, string path, int flags, uint mask, byte* buffer);

    /// <summary>With a null <paramref name="resolved"/>, returns a malloc'd path the caller must <see cref="free"/>.</summary>
    [LibraryImport("libc", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial nint realpath(string path, nint resolved);

    [LibraryImport("libc")]
    public static partial void free(nint pointer);

    public static string ErrorText(int errno) => Marshal.GetPInvokeErrorMessage(errno);
}
