namespace Diagnostics.Fuzz.Harness;

/// <summary>Runs saved inputs (a corpus folder, a crash file) through a target once each, in process.</summary>
public static class CorpusReplay
{
    /// <summary>Every file under <paramref name="paths"/> (files or folders, recursively), in a stable order.</summary>
    public static IEnumerable<string> Files(IEnumerable<string> paths)
    {
        foreach (string path in paths)
        {
            if (Directory.Exists(path))
            {
                foreach (string file in Directory.EnumerateFiles(path, "*", SearchOption.AllDirectories).Order(StringComparer.Ordinal))
                    yield return file;
            }
            else
                yield return path;
        }
    }

    /// <summary>Runs one file; returns the unexpected exception, or null when the target took it in stride.</summary>
    public static Exception? RunFile(IFuzzTarget target, string file)
    {
        byte[] input = File.ReadAllBytes(file);
        try
        {
            AllocationBudget.Run(target, input);
            return null;
        }
        catch (Exception ex)
        {
            return ex;
        }
    }
}
