namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>A fresh directory under the system temp folder, deleted with everything in it on dispose.</summary>
public sealed class TempDirectory : IDisposable
{
    public TempDirectory(string prefix = "diagnostics-test-")
        => Path = Directory.CreateTempSubdirectory(prefix).FullName;

    public string Path { get; }

    /// <summary>The append-only directory a server started with --dir <see cref="Path"/> uses by default.</summary>
    public string AppendDirectory => System.IO.Path.Combine(Path, "appendonlydir");

    public string File(string name) => System.IO.Path.Combine(Path, name);

    public void Dispose()
    {
        try
        {
            Directory.Delete(Path, recursive: true);
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }
    }
}
