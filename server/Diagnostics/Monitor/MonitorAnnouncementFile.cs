using System.Security.Cryptography;
using System.Text.Json;
using Diagnostics.Contracts;

namespace Diagnostics.Server.Diagnostics.Monitor;

/// <summary>
/// Writes the server's <see cref="MonitorAnnouncement"/> at start into the first usable
/// <see cref="AnnouncementDirectories"/> entry and deletes it at exit. The token is 32 random
/// bytes, new at every start. The directory must be ours and closed to everyone else (0700), and
/// the file is created 0600, so only this user and root can read the token: a directory someone
/// else made first, or left open, or a symbolic link, is refused rather than used, and the next
/// candidate tried. A root monitor trusts the file only so (see the monitor's AnnouncementVerifier).
/// </summary>
public sealed class MonitorAnnouncementFile : IDisposable
{
    private MonitorAnnouncementFile(string path, string token, string? problem)
    {
        Path = path;
        Token = token;
        Problem = problem;
    }

    public string Path { get; }
    public string Token { get; }
    /// <summary>Why no monitor can attach (no HTTP listener, no usable directory), or null.</summary>
    public string? Problem { get; }

    public static MonitorAnnouncementFile Write(int port, string? ingestUrl, string dataDirectory)
    {
        string token = Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(32));
        if (ingestUrl is null)
            return new MonitorAnnouncementFile("", token, "the HTTP listener is off (http-port 0): a monitor has nowhere to push");
        var announcement = new MonitorAnnouncement(Environment.ProcessId, port, ingestUrl, token, dataDirectory);
        var problems = new List<string>();
        uint uid = OperatingSystem.IsWindows() ? 0 : UnixIdentity.EffectiveUserId();
        foreach (string directory in AnnouncementDirectories.Candidates(uid, Environment.GetEnvironmentVariable))
        {
            try
            {
                PrepareDirectory(directory, uid);
                RemoveStale(directory);
                string path = System.IO.Path.Combine(directory, AnnouncementDirectories.FileName(Environment.ProcessId));
                WriteAtomically(path, announcement);
                return new MonitorAnnouncementFile(path, token, null);
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or InvalidOperationException)
            {
                problems.Add($"{directory}: {ex.Message}");
            }
        }
        return new MonitorAnnouncementFile("", token, "no directory to announce the server to a monitor: " + string.Join("; ", problems));
    }

    private static void PrepareDirectory(string directory, uint uid)
    {
        if (OperatingSystem.IsWindows())
        {
            Directory.CreateDirectory(directory);
            return;
        }
        const UnixFileMode ownerOnly = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute;
        var info = Directory.Exists(directory) ? new DirectoryInfo(directory) : Directory.CreateDirectory(directory, ownerOnly);
        if (info.LinkTarget is not null)
            throw new InvalidOperationException("is a symbolic link");
        if (UnixIdentity.OwnerOf(directory) != uid)
            throw new InvalidOperationException($"belongs to another user (uid {UnixIdentity.OwnerOf(directory)})");
        if ((info.UnixFileMode & ~ownerOnly) != 0)
            throw new InvalidOperationException($"is open to other users (mode {Convert.ToString((int)info.UnixFileMode, 8)}); it must be 700");
    }

    /// <summary>
    /// Writes a new file beside the announcement and renames it over: a monitor never reads half a
    /// file, and the file is 0600 from its creation, whatever was at either name before (a
    /// symbolic link there is replaced, never followed).
    /// </summary>
    private static void WriteAtomically(string path, MonitorAnnouncement announcement)
    {
        string written = path + ".new";
        File.Delete(written);
        var options = new FileStreamOptions { Mode = FileMode.CreateNew, Access = FileAccess.Write };
        if (!OperatingSystem.IsWindows())
            options.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        using (var stream = new FileStream(written, options))
            JsonSerializer.Serialize(stream, announcement, ContractsJson.Default.MonitorAnnouncement);
        File.Move(written, path, overwrite: true);
    }

    /// <summary>
    /// Announcements of servers that are gone (killed before they could delete theirs), and the
    /// new files of any killed while writing one.
    /// </summary>
    private static void RemoveStale(string directory)
    {
        foreach (string file in Directory.GetFiles(directory, "*.json*"))
        {
            string name = System.IO.Path.GetFileName(file);
            if (int.TryParse(name.AsSpan(0, name.IndexOf('.')), out int pid) && pid != Environment.ProcessId && !ProcessLiveness.IsRunning(pid))
                File.Delete(file);
        }
    }

    public void Dispose()
    {
        if (Path.Length > 0)
            File.Delete(Path);
    }
}
