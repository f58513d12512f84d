#!/usr/bin/python3
"""A pass-through FUSE file system whose fsync and fdatasync each take DELAY_MS longer than the
disk underneath: a slow disk, for the doctor's fsync-latency test. Everything else goes straight
to BACKING_DIR. Runs in the foreground until unmounted (umount MOUNTPOINT) or killed.

    slow_fsync_fs.py BACKING_DIR MOUNTPOINT DELAY_MS

Needs Debian's python3-fusepy (imported as fusepy) and root, or fuse's user mounts.
"""
import errno
import os
import sys
import time

from fusepy import FUSE, FuseOSError, Operations


class SlowFsync(Operations):
    def __init__(self, root, delay_seconds):
        self.root = root
        self.delay = delay_seconds

    def _path(self, path):
        return os.path.join(self.root, path.lstrip('/'))

    def access(self, path, mode):
        if not os.access(self._path(path), mode):
            raise FuseOSError(errno.EACCES)

    def getattr(self, path, fh=None):
        st = os.lstat(self._path(path))
        return {key: getattr(st, key) for key in (
            'st_atime', 'st_ctime', 'st_mtime', 'st_gid', 'st_uid', 'st_mode', 'st_nlink', 'st_size')}

    def readdir(self, path, fh):
        return ['.', '..'] + os.listdir(self._path(path))

    def statfs(self, path):
        st = os.statvfs(self._path(path))
        return {key: getattr(st, key) for key in (
            'f_bavail', 'f_bfree', 'f_blocks', 'f_bsize', 'f_favail', 'f_ffree', 'f_files', 'f_flag',
            'f_frsize', 'f_namemax')}

    def chmod(self, path, mode):
        os.chmod(self._path(path), mode)

    def chown(self, path, uid, gid):
        os.chown(self._path(path), uid, gid)

    def utimens(self, path, times=None):
        os.utime(self._path(path), times)

    def mkdir(self, path, mode):
        os.mkdir(self._path(path), mode)

    def rmdir(self, path):
        os.rmdir(self._path(path))

    def unlink(self, path):
        os.unlink(self._path(path))

    def rename(self, old, new):
        os.rename(self._path(old), self._path(new))

    def truncate(self, path, length, fh=None):
        if fh is not None:
            os.ftruncate(fh, length)
        else:
            os.truncate(self._path(path), length)

    def open(self, path, flags):
        return os.open(self._path(path), flags)

    def create(self, path, mode, fi=None):
        return os.open(self._path(path), os.O_RDWR | os.O_CREAT, mode)

    def read(self, path, size, offset, fh):
        return os.pread(fh, size, offset)

    def write(self, path, data, offset, fh):
        return os.pwrite(fh, data, offset)

    def flush(self, path, fh):
        return 0

    def release(self, path, fh):
        os.close(fh)
        return 0

    def fsync(self, path, datasync, fh):
        time.sleep(self.delay)
        if datasync:
            os.fdatasync(fh)
        else:
            os.fsync(fh)
        return 0

    def fsyncdir(self, path, datasync, fh):
        time.sleep(self.delay)
        return 0


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    backing, mountpoint, delay_ms = sys.argv[1], sys.argv[2], int(sys.argv[3])
    FUSE(SlowFsync(os.path.realpath(backing), delay_ms / 1000.0), mountpoint,
         foreground=True, nothreads=False, allow_other=True)


if __name__ == '__main__':
    main()
