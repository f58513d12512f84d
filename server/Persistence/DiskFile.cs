using System.Runtime.InteropServices;
using Diagnostics.Server.Diagnostics.Disk;
using Microsoft.Win32.SafeHandles;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// A file the persistence code reads or writes, with every system call counted in
/// <see cref="DiskIo"/> under the purpose the caller names. On Linux writes and syncs are direct
/// pwrite/fdatasync calls rather than RandomAccess, for two reasons: each pwrite is recorded with
/// the bytes the kernel took (so the counts match what the elevated monitor sees, partial writes
/// included), and fdatasync is what Redis uses (RandomAccess.FlushToDisk is a full fsync).
/// Errors surface as <see cref="DiskFileException"/> carrying the system's message
/// ("No space left on device"), which is what MISCONF replies and INFO show.
/// </summary>
public sealed partial class DiskFile : IDisposable
{
    private readonly SafeFileHandle _handle;
    private readonly int _descriptor;

    private DiskFile(string path, SafeFileHandle handle)
    {
        Path = path;
        _handle = handle;
        _descriptor = OperatingSystem.IsLinux() ? (int)handle.DangerousGetHandle() : -1;
    }

    public string Path { get; }
    public string Name => System.IO.Path.GetFileName(Path);

    /// <summary>Opens (creating if asked) a file for appending at explicit offsets.</summary>
    public static DiskFile OpenWrite(string path, bool create)
        => Open(path, create ? FileMode.OpenOrCreate : FileMode.Open, FileAccess.ReadWrite);

    /// <summary>Creates (or empties) a file.</summary>
    public static DiskFile Create(string path) => Open(path, FileMode.Create, FileAccess.ReadWrite);

    public static DiskFile OpenRead(string path) => Open(path, FileMode.Open, FileAccess.Read);

    /// <summary>
    /// Creates a file that must not exist yet (so never through a link someone placed there),
    /// readable by the server's user only: snapshots hold the whole dataset.
    /// </summary>
    public static DiskFile CreateNew(string path)
    {
        var file = Open(path, FileMode.CreateNew, FileAccess.ReadWrite);
        if (!OperatingSystem.IsWindows())
            File.SetUnixFileMode(file._handle, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        return file;
    }

    private static DiskFile Open(string path, FileMode mode, FileAccess access)
    {
        long start = DiskIo.Start();
        try
        {
            var handle = File.OpenHandle(path, mode, access, FileShare.ReadWrite | FileShare.Delete);
            DiskIo.Record(DiskIoPurpose.Open, 0, start);
            return new DiskFile(path, handle);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            DiskIo.Record(DiskIoPurpose.Open, 0, start, failed: true);
            throw new DiskFileException($"{System.IO.Path.GetFileName(path)}: {ex.Message}", ex);
        }
    }

    public long Length => RandomAccess.GetLength(_handle);

    /// <summary>Writes all of <paramref name="data"/> at <paramref name="offset"/>, one counted system call per kernel write.</summary>
    public void Write(ReadOnlySpan<byte> data, long offset, DiskIoPurpose purpose)
    {
        if (!OperatingSystem.IsLinux())
        {
            long start = DiskIo.Start();
            try
            {
                RandomAccess.Write(_handle, data, offset);
                DiskIo.Record(purpose, data.Length, start, file: Path);
            }
            catch (IOException ex)
            {
                DiskIo.Record(purpose, 0, start, failed: true, file: Path);
                throw new DiskFileException(ex.Message, ex);
            }
            return;
        }
        while (!data.IsEmpty)
        {
            long start = DiskIo.Start();
            nint written = PWrite(data, offset);
            if (written < 0)
            {
                int errno = Marshal.GetLastPInvokeError();
                DiskIo.Record(purpose, 0, start, failed: true, file: Path);
                if (errno == EINTR)
                    continue;
                throw new DiskFileException(Marshal.GetPInvokeErrorMessage(errno));
            }
            DiskIo.Record(purpose, written, start, file: Path);
            data = data[(int)written..];
            offset += written;
        }
    }

    private unsafe nint PWrite(ReadOnlySpan<byte> data, long offset)
    {
        fixed (byte* p = data)
            return LinuxPWrite(_descriptor, p, (nuint)data.Length, offset);
    }

    /// <summary>Reads up to <paramref name="buffer"/>.Length bytes at <paramref name="offset"/>; 0 at the end.</summary>
    public int Read(Span<byte> buffer, long offset, DiskIoPurpose purpose)
    {
        long start = DiskIo.Start();
        try
        {
            int read = RandomAccess.Read(_handle, buffer, offset);
            DiskIo.Record(purpose, read, start, file: Path);
            return read;
        }
        catch (IOException ex)
        {
            DiskIo.Record(purpose, 0, start, failed: true, file: Path);
            throw new DiskFileException($"{Name}: {ex.Message}", ex);
        }
    }

    /// <summary>Makes everything written so far durable (fdatasync on Linux, as Redis).</summary>
    public void Sync(DiskIoPurpose purpose)
    {
        long start = DiskIo.Start();
        if (OperatingSystem.IsLinux())
        {
            int result;
            int errno;
            do
            {
                result = LinuxFdatasync(_descriptor);
                errno = result < 0 ? Marshal.GetLastPInvokeError() : 0;
            }
            while (result < 0 && errno == EINTR);
            DiskIo.Record(purpose, 0, start, failed: result < 0, file: Path);
            if (result < 0)
                throw new DiskFileException(Marshal.GetPInvokeErrorMessage(errno));
            return;
        }
        try
        {
            RandomAccess.FlushToDisk(_handle);
            DiskIo.Record(purpose, 0, start, file: Path);
        }
        catch (IOException ex)
        {
            DiskIo.Record(purpose, 0, start, failed: true, file: Path);
            throw new DiskFileException(ex.Message, ex);
        }
    }

    /// <summary>Cuts the file to <paramref name="length"/> bytes (after a partial write, or a truncated tail).</summary>
    public void Truncate(long length)
    {
        long start = DiskIo.Start();
        try
        {
            RandomAccess.SetLength(_handle, length);
            DiskIo.Record(DiskIoPurpose.Truncate, 0, start);
        }
        catch (IOException ex)
        {
            DiskIo.Record(DiskIoPurpose.Truncate, 0, start, failed: true);
            throw new DiskFileException(ex.Message, ex);
        }
    }

    public void Dispose()
    {
        if (_handle.IsClosed)
            return;
        long start = DiskIo.Start();
        _handle.Dispose();
        DiskIo.Record(DiskIoPurpose.Close, 0, start);
    }

    /// <summary>
    /// Makes a rename or a new file in <paramref name="directory"/> durable (fsync of the directory,
    /// as Redis does after switching AOF files). A no-op where directories cannot be opened (Windows).
    /// </summary>
    public static void SyncDirectory(string directory)
    {
        if (!OperatingSystem.IsLinux())
            return;
        long start = DiskIo.Start();
        int fd = LinuxOpen(directory, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
        {
            int errno = Marshal.GetLastPInvokeError();
            DiskIo.Record(DiskIoPurpose.Manifest, 0, start, failed: true);
            throw new DiskFileException($"{directory}: {Marshal.GetPInvokeErrorMessage(errno)}");
        }
        int result = LinuxFsync(fd);
        int syncErrno = result < 0 ? Marshal.GetLastPInvokeError() : 0;
        LinuxClose(fd);
        DiskIo.Record(DiskIoPurpose.Manifest, 0, start, failed: result < 0);
        if (result < 0)
            throw new DiskFileException($"{directory}: {Marshal.GetPInvokeErrorMessage(syncErrno)}");
    }

    private const int EINTR = 4;
    private const int O_RDONLY = 0;
    private const int O_DIRECTORY = 0x10000;

    [LibraryImport("libc", EntryPoint = "pwrite64", SetLastError = true)]
    private static unsafe partial nint LinuxPWrite(int fd, byte* buffer, nuint count, long offset);

    [LibraryImport("libc", EntryPoint = "fdatasync", SetLastError = true)]
    private static partial int LinuxFdatasync(int fd);

    [LibraryImport("libc", EntryPoint = "fsync", SetLastError = true)]
    private static partial int LinuxFsync(int fd);

    [LibraryImport("libc", EntryPoint = "open", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int LinuxOpen(string path, int flags);

    [LibraryImport("libc", EntryPoint = "close", SetLastError = true)]
    private static partial int LinuxClose(int fd);
}
