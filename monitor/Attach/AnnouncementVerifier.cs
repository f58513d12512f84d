using System.Globalization;
using System.Net;
using System.Text.Json;
using Diagnostics.Contracts;

namespace Diagnostics.Monitor.Attach;

/// <summary>
/// Decides whether a root monitor may act on an announcement file: trace the pid it names and
/// send that pid's data where it says. Everything in it must be beyond the forging of anyone but
/// the pid's own user (or root): the folder and the file are not symbolic links and not writable
/// by others, both belong to the pid's user or root, the pid shares the monitor's network, holds
/// a listening socket on the announced RESP port, and the ingest URL is a loopback URL on which
/// only the pid listens. The first failed check is the answer, worded for the log.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public static class AnnouncementVerifier
{
    // A real announcement is a few hundred bytes.
    private const int MaxBytes = 64 * 1024;

    /// <summary>
    /// The announcement, once it passed every check; or null with why it cannot be trusted; or
    /// null with no problem when it is trustworthy as a file but <paramref name="wanted"/> says it
    /// is not the server looked for (not worth a log line).
    /// </summary>
    public static (MonitorAnnouncement? Announcement, string? Problem) Verify(string path, Func<MonitorAnnouncement, bool> wanted)
    {
        try
        {
            return VerifyOrThrow(path, wanted);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return (null, $"it cannot be read: {ex.Message}");
        }
    }

    private static (MonitorAnnouncement?, string?) VerifyOrThrow(string path, Func<MonitorAnnouncement, bool> wanted)
    {
        string folder = Path.GetDirectoryName(Path.GetFullPath(path))!;
        var (folderFacts, realFolder, folderProblem) = FolderTrust.Check(folder, closedToOthers: true);
        if (folderProblem is not null)
            return (null, folderProblem);
        var (announcement, fileFacts, fileProblem) = Read(Path.Combine(realFolder, Path.GetFileName(path)));
        if (announcement is null)
            return (null, fileProblem);
        if (!wanted(announcement))
            return (null, null);

        string pid = announcement.Pid.ToString(CultureInfo.InvariantCulture);
        if (ProcessIdentity.UserOf(announcement.Pid) is not uint uid)
            return (null, $"pid {pid} is not running");
        if (folderFacts.Owner != 0 && folderFacts.Owner != uid)
            return (null, $"its folder belongs to uid {folderFacts.Owner}, but pid {pid} runs as uid {uid}");
        if (fileFacts.Owner != 0 && fileFacts.Owner != uid)
            return (null, $"it belongs to uid {fileFacts.Owner}, but pid {pid} runs as uid {uid}");
        if (!ProcessIdentity.SharesNetworkWithMonitor(announcement.Pid))
            return (null, $"pid {pid} is in another network namespace: its ports are not the monitor's");
        var sockets = ProcessSockets.Read(announcement.Pid);
        if (!sockets.ListensOn(announcement.Port))
            return (null, $"pid {pid} does not listen on its announced port {announcement.Port.ToString(CultureInfo.InvariantCulture)}");
        if (IngestEndpoint(announcement.IngestUrl) is not { } ingest)
            return (null, $"its ingest URL '{Printable(announcement.IngestUrl)}' is not http://LOOPBACK-ADDRESS:PORT{MonitorAnnouncement.IngestPath}");
        if (sockets.WhyNotReached(ingest.Address, ingest.Port) is { } unreached)
            return (null, $"its ingest URL does not lead to pid {pid}: {unreached}");
        return (announcement, null);
    }

    /// <summary>The file's announcement and facts, read through a handle that is the regular file lstat saw.</summary>
    private static (MonitorAnnouncement?, FileFacts, string?) Read(string path)
    {
        if (FileFacts.Of(path) is not { } facts)
            return (null, default, "it is gone");
        if (facts.Kind == FileKind.SymbolicLink)
            return (null, facts, "it is a symbolic link");
        if (facts.Kind != FileKind.Regular)
            return (null, facts, "it is not a regular file");
        if (facts.WritableByOthers)
            return (null, facts, $"it is writable by others (mode {facts.ModeText})");
        if (facts.Size > MaxBytes)
            return (null, facts, $"it is larger than {MaxBytes / 1024} KiB");
        using var handle = File.OpenHandle(path);
        var opened = FileFacts.Of(handle);
        if (opened.Device != facts.Device || opened.Inode != facts.Inode)
            return (null, facts, "it was replaced while being opened");
        var bytes = new byte[MaxBytes + 1];
        int length = 0, read;
        while (length < bytes.Length && (read = RandomAccess.Read(handle, bytes.AsSpan(length), length)) > 0)
            length += read;
        if (length > MaxBytes)
            return (null, facts, $"it is larger than {MaxBytes / 1024} KiB");
        try
        {
            var announcement = JsonSerializer.Deserialize(bytes.AsSpan(0, length), ContractsJson.Default.MonitorAnnouncement);
            if (announcement is null || announcement.IngestUrl is null || announcement.Token is null || announcement.DataDirectory is null)
                return (null, facts, "it is not an announcement: fields are missing");
            return (announcement, facts, null);
        }
        catch (JsonException ex)
        {
            return (null, facts, $"it is not an announcement: {Printable(ex.Message)}");
        }
    }

    /// <summary>The address and port of an http URL to the ingest path on a loopback address, or null.</summary>
    public static IPEndPoint? IngestEndpoint(string url)
    {
        if (!Uri.TryCreate(url, UriKind.Absolute, out var uri) || uri.Scheme != Uri.UriSchemeHttp || uri.UserInfo.Length > 0
            || uri.AbsolutePath != MonitorAnnouncement.IngestPath || uri.Query.Length > 0 || uri.Fragment.Length > 0
            || uri.HostNameType is not (UriHostNameType.IPv4 or UriHostNameType.IPv6)
            || !IPAddress.TryParse(uri.DnsSafeHost, out var address) || !IPAddress.IsLoopback(address))
            return null;
        return new IPEndPoint(address, uri.Port);
    }

    /// <summary>Text from the file as it may go into a log line: short, one line.</summary>
    private static string Printable(string text)
    {
        var chars = text.Length > 200 ? text[..200].ToCharArray() : text.ToCharArray();
        for (int i = 0; i < chars.Length; i++)
            if (char.IsControl(chars[i]))
                chars[i] = '?';
        return new string(chars);
    }
}
