using System.Security.Cryptography;
using Diagnostics.Doctor;

namespace Diagnostics.Studio.Sources;

/// <summary>
/// The packages opened in the studio, by an id that cannot be guessed (it is in the offline pages'
/// URL). Bounded twice: at most <see cref="Capacity"/>, and together within
/// <see cref="PackageLimits.MaxMemoryBytes"/> of counted memory; opening one more closes the ones
/// opened longest ago until it fits. One package is read at a time, so reading adds at most one
/// more memory limit's worth, and the upload waits on disk, not on the heap.
/// </summary>
public sealed class PackageLibrary
{
    public const int Capacity = 8;

    private readonly Func<PackageLimits> _limits;
    private readonly SemaphoreSlim _reading = new(1, 1);
    private readonly Lock _lock = new();
    private readonly List<PackageSource> _open = [];

    public PackageLibrary() : this(() => PackageLimits.Default)
    {
    }

    /// <summary><paramref name="limits"/> is read at each opening, so a changed setting applies to the next.</summary>
    public PackageLibrary(Func<PackageLimits> limits) => _limits = limits;

    public PackageLimits Limits => _limits();

    /// <summary>How many packages are open, and the memory counted for them together.</summary>
    public (int Count, long MemoryBytes) Usage
    {
        get
        {
            lock (_lock)
                return (_open.Count, _open.Sum(p => p.MemoryBytes));
        }
    }

    /// <summary>
    /// Copies an upload to a temporary file and reads it as a package; <see cref="InvalidPackageException"/>
    /// when it is not one or is over a limit. <paramref name="declaredLength"/> (what the uploader
    /// says it sends) refuses an oversized upload before it is copied; the bytes are counted anyway.
    /// </summary>
    public async Task<PackageSource> OpenAsync(Stream upload, string fileName, long? declaredLength, CancellationToken cancellationToken)
    {
        var limits = _limits();
        await using var file = await PackageSpool.CopyAsync(upload, fileName, declaredLength, limits, cancellationToken);
        string id = Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(12));
        PackageSource package;
        await _reading.WaitAsync(cancellationToken);
        try
        {
            // Synchronous on one pool thread: the reader counts the allocations of the thread it runs on.
            package = await Task.Run(() => PackageSource.Open(file, id, fileName, limits), cancellationToken);
        }
        finally
        {
            _reading.Release();
        }
        lock (_lock)
        {
            while (_open.Count > 0 && (_open.Count >= Capacity || _open.Sum(p => p.MemoryBytes) + package.MemoryBytes > limits.MaxMemoryBytes))
                _open.RemoveAt(0);
            _open.Add(package);
        }
        return package;
    }

    public PackageSource? Find(string id)
    {
        lock (_lock)
        {
            foreach (var package in _open)
            {
                if (package.Description.PackageId == id)
                    return package;
            }
            return null;
        }
    }
}
