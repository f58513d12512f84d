using System.Runtime.InteropServices;

namespace Diagnostics.Server.Diagnostics.Monitor;

/// <summary>
/// Who we are and who owns a path: .NET exposes a file's mode but not its owner, and the
/// announcement directory must be refused when it is not ours. statx is used because its
/// layout is the same on every architecture (stx_uid at byte 20), unlike struct stat.
/// </summary>
internal static partial class UnixIdentity
{
    private const int AtCurrentDirectory = -100;
    private const int AtSymlinkNoFollow = 0x100;
    private const uint StatxUid = 0x8;

    [LibraryImport("libc")]
    private static partial uint geteuid();

    [LibraryImport("libc", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static unsafe partial int statx(int directoryFd, string path, int flags, uint mask, byte* buffer);

    public static uint EffectiveUserId() => geteuid();

    public static unsafe uint OwnerOf(string path)
    {
        byte* buffer = stackalloc byte[256];
        if (statx(AtCurrentDirectory, path, AtSymlinkNoFollow, StatxUid, buffer) != 0)
            throw new IOException($"cannot stat {path}: {Marshal.GetPInvokeErrorMessage(Marshal.GetLastPInvokeError())}");
        return *(uint*)(buffer + 20);
    }
}
