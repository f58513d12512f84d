using Diagnostics.Fuzz.Harness;
using Diagnostics.Server.Configuration;

namespace Diagnostics.Fuzz.Targets;

/// <summary>
/// The config file loader on a redis.conf in the sandbox folder, into a fresh ServerConfig.
/// The loader documents no exception: every problem, an unreadable include too, must come back as
/// a problem line. "include" may name only paths inside the sandbox (inputs that reach outside it
/// are skipped), so a fuzzed file can include itself, a folder or a missing file, and nothing else.
/// </summary>
public sealed class ConfigTarget : IFuzzTarget
{
    public string Name => "config";

    public void Run(ReadOnlySpan<byte> input)
    {
        string path = Path.Combine(Sandbox.Folder, "redis.conf");
        File.WriteAllBytes(path, input.ToArray());
        if (!IncludesStayInSandbox(path))
            return;
        var problems = new List<string>();
        ConfigLoader.LoadFile(path, new ServerConfig(), problems);
    }

    private static bool IncludesStayInSandbox(string path)
    {
        string root = Sandbox.Folder + Path.DirectorySeparatorChar;
        foreach (string raw in File.ReadLines(path))
        {
            string line = raw.Trim();
            if (line.Length == 0 || line[0] == '#')
                continue;
            if (ConfigLoader.SplitLine(line) is not [var name, var target] || !name.Equals("include", StringComparison.OrdinalIgnoreCase))
                continue;
            string full;
            try
            {
                full = Path.GetFullPath(target, Sandbox.Folder);
            }
            catch (ArgumentException)
            {
                continue; // empty or holding a NUL: refused before it names anything
            }
            if (!(full + Path.DirectorySeparatorChar).StartsWith(root, StringComparison.Ordinal))
                return false;
        }
        return true;
    }
}
