namespace Diagnostics.Benchmarks;

/// <summary>
/// A fresh directory under the system temp folder, deleted on Dispose. Every one still alive is
/// also deleted by <see cref="DeleteAll"/>, which the harness calls when a signal stops it and at
/// exit, so an interrupted run does not leave gigabytes of AOF behind.
/// </summary>
public sealed class ScratchDirectory : IDisposable
{
    private static readonly List<ScratchDirectory> Alive = [];
    // Set by DeleteAll: a signal handler runs beside the main thread, which must not create a
    // directory after the clean-up has passed.
    private static bool _closed;

    private ScratchDirectory(string path) => Path = path;

    public string Path { get; }

    public static ScratchDirectory Create(string prefix)
    {
        var directory = new ScratchDirectory(Directory.CreateTempSubdirectory(prefix).FullName);
        lock (Alive)
        {
            if (!_closed)
            {
                Alive.Add(directory);
                return directory;
            }
        }
        Directory.Delete(directory.Path);
        throw new HarnessException("interrupted");
    }

    /// <summary>A fresh directory holding a copy of every file under <paramref name="source"/>.</summary>
    public static ScratchDirectory CopyOf(string source, string prefix)
    {
        var copy = Create(prefix);
        try
        {
            foreach (string dir in Directory.EnumerateDirectories(source, "*", SearchOption.AllDirectories))
                Directory.CreateDirectory(System.IO.Path.Combine(copy.Path, System.IO.Path.GetRelativePath(source, dir)));
            foreach (string file in Directory.EnumerateFiles(source, "*", SearchOption.AllDirectories))
                File.Copy(file, System.IO.Path.Combine(copy.Path, System.IO.Path.GetRelativePath(source, file)));
        }
        catch
        {
            copy.Dispose();
            throw;
        }
        return copy;
    }

    /// <summary>Bytes of all files under <paramref name="relative"/> (0 when it does not exist).</summary>
    public long SizeOf(string relative)
    {
        string path = System.IO.Path.Combine(Path, relative);
        if (!Directory.Exists(path))
            return 0;
        long total = 0;
        foreach (string file in Directory.EnumerateFiles(path, "*", SearchOption.AllDirectories))
            total += new FileInfo(file).Length;
        return total;
    }

    public static void DeleteAll()
    {
        ScratchDirectory[] directories;
        lock (Alive)
        {
            _closed = true;
            directories = [.. Alive];
        }
        foreach (var directory in directories)
            directory.Dispose();
    }

    public void Dispose()
    {
        lock (Alive)
        {
            if (!Alive.Remove(this))
                return;
        }
        try
        {
            Directory.Delete(Path, recursive: true);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            Console.Error.WriteLine($"note: could not delete {Path}: {e.Message}");
        }
    }
}
