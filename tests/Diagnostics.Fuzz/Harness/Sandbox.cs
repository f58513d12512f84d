namespace Diagnostics.Fuzz.Harness;

/// <summary>
/// A private folder for the targets that read files (AOF, config): one per process, so parallel
/// fuzzers never share one, removed when the process ends. fuzz.sh points TMPDIR at /dev/shm,
/// so the per-input writes never reach a disk.
/// </summary>
public static class Sandbox
{
    private static readonly Lazy<string> s_path = new(() =>
    {
        string path = System.IO.Path.Combine(System.IO.Path.GetTempPath(), $"diagnostics-fuzz-{Environment.ProcessId}");
        Directory.CreateDirectory(path);
        AppDomain.CurrentDomain.ProcessExit += (_, _) =>
        {
            try { Directory.Delete(path, recursive: true); } catch (IOException) { }
        };
        return path;
    });

    public static string Folder => s_path.Value;
}
