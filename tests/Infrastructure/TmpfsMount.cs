namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// A small tmpfs of its own, mounted on a fresh directory: a disk a test can fill. Mounting needs
/// root (CAP_SYS_ADMIN), which the test machines and CI have; without it the test fails, saying so.
/// </summary>
public sealed class TmpfsMount : IDisposable
{
    private readonly TempDirectory _mountPoint;

    public TmpfsMount(string size, string prefix = "tmpfs-")
    {
        _mountPoint = new TempDirectory(prefix);
        var mount = ExternalTool.Run("mount", "mount", ["-t", "tmpfs", "-o", "size=" + size, "tmpfs", _mountPoint.Path], timeoutMs: 30_000);
        if (mount.ExitCode != 0)
        {
            _mountPoint.Dispose();
            Assert.Fail($"mounting a {size} tmpfs on {_mountPoint.Path} failed (exit {mount.ExitCode}): {mount.StandardError.Trim()}. "
                + "This test needs root (CAP_SYS_ADMIN) to mount a small file system it can fill; run the tests as root.");
        }
    }

    public string Path => _mountPoint.Path;

    public void Dispose()
    {
        // Lazy: a server that has not quite let go of its files yet does not keep the mount.
        ExternalTool.Run("umount", "mount", ["-l", _mountPoint.Path], timeoutMs: 30_000);
        _mountPoint.Dispose();
    }
}
