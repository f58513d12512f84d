using System.Diagnostics;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// A slow disk: Tools/slow_fsync_fs.py mounts a pass-through FUSE file system over a temp
/// directory whose fsync and fdatasync take <c>delayMs</c> longer than the real disk. Real
/// system calls on a real mount, only slower, as a failing or saturated device makes them.
/// Needs Debian's python3-fusepy and root; without them the test fails, saying how to get them.
/// </summary>
public sealed class SlowFsyncMount : IDisposable
{
    private const string Python = "/usr/bin/python3";
    private readonly TempDirectory _backing = new("slow-fsync-backing-");
    private readonly TempDirectory _mountPoint = new("slow-fsync-");
    private readonly Process _fuse;

    public SlowFsyncMount(int delayMs)
    {
        // Debian's python (not one on PATH from elsewhere) is the one that has Debian's fusepy.
        if (!File.Exists(Python) || !File.Exists("/usr/lib/python3/dist-packages/fusepy.py") || !File.Exists("/dev/fuse"))
        {
            _backing.Dispose();
            _mountPoint.Dispose();
            Assert.Fail("the slow disk needs Debian's python3 with fusepy and /dev/fuse: sudo apt-get install -y python3-fusepy fuse3");
        }
        var info = new ProcessStartInfo(Python)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in (string[])[System.IO.Path.Combine(AppContext.BaseDirectory, "Tools", "slow_fsync_fs.py"), _backing.Path, _mountPoint.Path, delayMs.ToString()])
            info.ArgumentList.Add(argument);
        _fuse = Process.Start(info)!;
        var deadline = DateTime.UtcNow.AddSeconds(15);
        while (!IsMounted())
        {
            if (_fuse.HasExited || DateTime.UtcNow > deadline)
            {
                string error = _fuse.HasExited ? _fuse.StandardError.ReadToEnd() : "no mount within 15 s";
                Dispose();
                Assert.Fail($"mounting the slow-fsync FUSE file system on {_mountPoint.Path} failed: {error.Trim()}. "
                    + "It needs root (or FUSE user mounts) and /dev/fuse; run the tests as root.");
            }
            Thread.Sleep(50);
        }
    }

    public string Path => _mountPoint.Path;

    private bool IsMounted()
    {
        foreach (string line in File.ReadLines("/proc/self/mounts"))
            if (line.Split(' ')[1] == _mountPoint.Path)
                return true;
        return false;
    }

    public void Dispose()
    {
        if (IsMounted())
            ExternalTool.Run("umount", "mount", ["-l", _mountPoint.Path], timeoutMs: 30_000);
        if (!_fuse.HasExited)
        {
            _fuse.Kill();
            _fuse.WaitForExit(5000);
        }
        _fuse.Dispose();
        _mountPoint.Dispose();
        _backing.Dispose();
    }
}
