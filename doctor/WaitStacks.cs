using System.Text.RegularExpressions;

namespace Diagnostics.Doctor;

/// <summary>Thread-pool threads stopped at the same place in a stacks report: where they block, and the server's frames (innermost two) that got them there.</summary>
public sealed record WaitStack(string BlockedIn, string? ServerFrames, int Threads);

/// <summary>
/// Reads the debug package's stacks.txt (ManagedStacks' report: a "Thread ID (0x..) "name" [state]:"
/// line, then its frames innermost first, two spaces in) and groups the thread pool's busy
/// threads by where they stand. Idle pool threads (waiting for work) are left out. The report
/// comes from outside (an uploaded package): lines that do not fit are skipped, and the groups
/// are bounded.
/// </summary>
public static partial class WaitStacks
{
    private const int MaxGroups = 32;
    private const int MaxFrameLength = 512;
    private const string ServerModule = "Diagnostics.Server!";

    [GeneratedRegex("^Thread \\d+ \\(0x[0-9A-Fa-f]+\\) \"(?<name>[^\"]*)\"")]
    private static partial Regex ThreadLine();

    public static IReadOnlyList<WaitStack> Summarize(TextReader report)
    {
        var groups = new Dictionary<(string, string?), int>();
        bool poolThread = false;
        string? innermost = null, serverFrame = null;
        int serverFrames = 0;
        void Flush()
        {
            if (poolThread && innermost is not null && !IsIdle(innermost, serverFrame))
            {
                var key = (innermost, serverFrame);
                if (groups.TryGetValue(key, out int count))
                    groups[key] = count + 1;
                else if (groups.Count < MaxGroups)
                    groups[key] = 1;
            }
            poolThread = false;
            innermost = serverFrame = null;
            serverFrames = 0;
        }
        while (report.ReadLine() is { } line)
        {
            if (line.StartsWith("Thread ", StringComparison.Ordinal))
            {
                Flush();
                var match = ThreadLine().Match(line);
                poolThread = match.Success && IsPoolThread(match.Groups["name"].Value);
            }
            else if (poolThread && line.StartsWith("  ", StringComparison.Ordinal) && line.Length > 2)
            {
                string frame = line.Length - 2 > MaxFrameLength ? line.Substring(2, MaxFrameLength) : line[2..];
                innermost ??= frame;
                if (frame.StartsWith(ServerModule, StringComparison.Ordinal) && serverFrames < 2)
                {
                    serverFrame = serverFrame is null ? Short(frame) : $"{serverFrame} <- {Short(frame)}";
                    serverFrames++;
                }
            }
            else if (line.Length == 0 || line.StartsWith('#'))
            {
                Flush();
            }
        }
        Flush();
        var result = new List<WaitStack>(groups.Count);
        foreach (var ((blockedIn, frame), threads) in groups)
            result.Add(new WaitStack(blockedIn, frame, threads));
        result.Sort((a, b) => b.Threads.CompareTo(a.Threads));
        return result;
    }

    private static bool IsPoolThread(string name) =>
        name.StartsWith(".NET TP Worker", StringComparison.Ordinal) || name.StartsWith(".NET ThreadPool Worker", StringComparison.Ordinal);

    /// <summary>A pool thread waiting for work (in the pool's own semaphore, no server frame), not blocked by anyone.</summary>
    private static bool IsIdle(string innermost, string? serverFrame) =>
        serverFrame is null && (innermost.Contains("LowLevelLifoSemaphore", StringComparison.Ordinal)
            || innermost.Contains("WorkerThread.WorkerDoWork", StringComparison.Ordinal)
            || innermost.Contains("WorkerThread.WorkerThreadStart", StringComparison.Ordinal)
            || innermost == "[Native Frames]");

    /// <summary>A frame as people read it: the method without its module and parameter list.</summary>
    public static string Short(string frame)
    {
        int bang = frame.IndexOf('!');
        string method = bang >= 0 ? frame[(bang + 1)..] : frame;
        int paren = method.IndexOf('(');
        return paren > 0 ? method[..paren] : method;
    }
}
