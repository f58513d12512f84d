using Diagnostics.Monitor.Linux;
using Microsoft.Win32.SafeHandles;

namespace Diagnostics.Monitor.Attach;

/// <summary>
/// A file's kind, owner, permission bits and identity from statx, never through a symbolic link:
/// what decides whether someone other than a process's own user could have written it. .NET
/// reports neither owners nor links' own modes.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public readonly record struct FileFacts(FileKind Kind, uint Owner, UnixFileMode Mode, long Size, ulong Device, ulong Inode)
{
    private const int AtCurrentDirectory = -100;
    private const int AtSymlinkNoFollow = 0x100;
    private const int AtEmptyPath = 0x1000;
    private const uint BasicStats = 0x7ff;
    private const int NoSuchFile = 2;

    /// <summary>Group or others may write it: anyone but its owner could have put it there or changed it.</summary>
    public bool WritableByOthers => (Mode & (UnixFileMode.GroupWrite | UnixFileMode.OtherWrite)) != 0;

    /// <summary>A sticky folder lets only an entry's owner rename or delete it, however open it is (/tmp).</summary>
    public bool Sticky => (Mode & UnixFileMode.StickyBit) != 0;

    public string ModeText => Convert.ToString((int)Mode, 8);

    /// <summary>The path itself (a link is not followed), or null when nothing is there.</summary>
    public static unsafe FileFacts? Of(string path)
    {
        byte* buffer = stackalloc byte[256];
        if (Libc.statx(AtCurrentDirectory, path, AtSymlinkNoFollow, BasicStats, buffer) == 0)
            return Parse(buffer);
        int errno = System.Runtime.InteropServices.Marshal.GetLastPInvokeError();
        if (errno == NoSuchFile)
            return null;
        throw new IOException($"cannot stat {path}: {Libc.ErrorText(errno)}");
    }

    /// <summary>The file an open handle refers to: what was opened, whatever the path names by now.</summary>
    public static unsafe FileFacts Of(SafeFileHandle handle)
    {
        byte* buffer = stackalloc byte[256];
        if (Libc.statx((int)handle.DangerousGetHandle(), "", AtEmptyPath, BasicStats, buffer) != 0)
            throw new IOException($"cannot stat an open file: {Libc.ErrorText(System.Runtime.InteropServices.Marshal.GetLastPInvokeError())}");
        return Parse(buffer);
    }

    // struct statx: uid at 20, mode (u16) at 28, ino at 32, size at 40, dev_major/minor at 136/140.
    private static unsafe FileFacts Parse(byte* statx)
    {
        int mode = *(ushort*)(statx + 28);
        var kind = (mode & 0xF000) switch
        {
            0x4000 => FileKind.Directory,
            0x8000 => FileKind.Regular,
            0xC000 => FileKind.Socket,
            0xA000 => FileKind.SymbolicLink,
            _ => FileKind.Other,
        };
        ulong device = ((ulong)*(uint*)(statx + 136) << 32) | *(uint*)(statx + 140);
        return new FileFacts(kind, *(uint*)(statx + 20), (UnixFileMode)(mode & 0xFFF), (long)*(ulong*)(statx + 40), device, *(ulong*)(statx + 32));
    }
}
