using System.Text;

namespace Diagnostics.Server.Configuration;

/// <summary>
/// Writes a whole file so that a reader sees the old one or the new one, never half: a temporary
/// file beside it, flushed to disk, then renamed over it (CONFIG REWRITE, ACL SAVE).
/// </summary>
public static class AtomicFile
{
    /// <summary>Null on success, else the reason; the temporary file is never left behind.</summary>
    public static string? Write(string path, string text, UnixFileMode? mode = null)
    {
        string temporary = Path.Combine(Path.GetDirectoryName(path) ?? ".", $".{Path.GetFileName(path)}.tmp-{Environment.ProcessId}");
        try
        {
            var options = new FileStreamOptions { Mode = FileMode.Create, Access = FileAccess.Write, Share = FileShare.None };
            if (mode is { } unixMode && !OperatingSystem.IsWindows())
                options.UnixCreateMode = unixMode;
            using (var stream = new FileStream(temporary, options))
            {
                stream.Write(Encoding.UTF8.GetBytes(text));
                stream.Flush(flushToDisk: true);
            }
            File.Move(temporary, path, overwrite: true);
            return null;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            try { File.Delete(temporary); } catch (IOException) { } catch (UnauthorizedAccessException) { }
            return ex.Message;
        }
    }
}
