using System.Security.Cryptography;

namespace Diagnostics.Studio.Sources;

/// <summary>
/// The packages opened in the studio, by an id that cannot be guessed (it is in the offline pages'
/// URL). Bounded: opening one more than <see cref="Capacity"/> closes the one opened longest ago.
/// </summary>
public sealed class PackageLibrary
{
    public const int Capacity = 8;
    /// <summary>The largest package accepted; the server's own are a few MB.</summary>
    public const long MaxPackageBytes = 256L * 1024 * 1024;

    private readonly Lock _lock = new();
    private readonly List<PackageSource> _open = [];

    public PackageSource Open(Stream zip, string fileName)
    {
        string id = Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(12));
        var package = PackageSource.Open(zip, id, fileName);
        lock (_lock)
        {
            if (_open.Count == Capacity)
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
