using System.Globalization;

namespace Diagnostics.Monitor.Attach;

/// <summary>
/// Finds the .NET runtime's diagnostic socket of a process (TMPDIR/dotnet-diagnostic-PID-KEY-socket,
/// TMPDIR as the process has it, else /tmp) for the root monitor's EventPipe session. Anyone may
/// create a file of that name in /tmp, and a client that takes the newest match would open a root
/// session with a stranger's socket; so a candidate counts only when it is a socket owned by the
/// process's user (or root), in a folder only they can change, and one of the process's own
/// listening sockets is bound to it.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public static class DiagnosticSocketFinder
{
    /// <summary>The verified socket, or null with why none; and every candidate ignored, with why.</summary>
    public static (string? Socket, string WhyNone, List<(string Path, string Why)> Ignored) Find(int pid)
    {
        var ignored = new List<(string, string)>();
        string pidText = pid.ToString(CultureInfo.InvariantCulture);
        if (ProcessIdentity.UserOf(pid) is not uint uid)
            return (null, $"pid {pidText} is not running", ignored);
        string folder = ProcessIdentity.EnvironmentOf(pid).GetValueOrDefault("TMPDIR") is { Length: > 0 } tmp ? tmp : "/tmp";
        string[] candidates;
        try
        {
            candidates = Directory.GetFiles(folder, $"dotnet-diagnostic-{pidText}-*-socket");
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            candidates = [];
        }
        if (candidates.Length == 0)
            return (null, $"no dotnet-diagnostic-{pidText}-*-socket in {folder} (not a .NET process, or one started with DOTNET_EnableDiagnostics=0)", ignored);

        var (folderFacts, realFolder, folderProblem) = FolderTrust.Check(folder, closedToOthers: false);
        if (folderProblem is null && folderFacts.Owner != 0 && folderFacts.Owner != uid)
            folderProblem = $"its folder belongs to uid {folderFacts.Owner}, but pid {pidText} runs as uid {uid}";
        var sockets = ProcessSockets.Read(pid);
        string? found = null;
        Array.Sort(candidates, StringComparer.Ordinal);
        foreach (string candidate in candidates)
        {
            string? why = folderProblem ?? WhyNot(Path.Combine(realFolder, Path.GetFileName(candidate)), pidText, uid, sockets);
            if (why is not null)
                ignored.Add((candidate, why));
            else
                found ??= Path.Combine(realFolder, Path.GetFileName(candidate));
        }
        return (found, found is null ? $"no .NET diagnostic socket of pid {pidText} in {folder} passed the checks (a stale one left by an earlier process with the same pid, or one planted by another user)" : "", ignored);
    }

    private static string? WhyNot(string path, string pid, uint uid, ProcessSockets sockets)
    {
        if (path.Contains(','))
            return "its path has a comma, which a diagnostic port address cannot carry";
        if (FileFacts.Of(path) is not { } facts)
            return "it is gone";
        if (facts.Kind == FileKind.SymbolicLink)
            return "it is a symbolic link";
        if (facts.Kind != FileKind.Socket)
            return "it is not a socket";
        if (facts.Owner != 0 && facts.Owner != uid)
            return $"it belongs to uid {facts.Owner}, but pid {pid} runs as uid {uid}";
        if (!sockets.ListensOnUnix(path))
            return $"no listening socket of pid {pid} is bound to it";
        return null;
    }
}
