using System.Text;

namespace Diagnostics.Server.Configuration;

/// <summary>
/// Reads settings the way redis-server does: an optional redis.conf-style file as the first
/// argument, then "--name value..." options that override it. Problems are collected with the
/// file and line so the operator sees all of them at once.
/// </summary>
public static class ConfigLoader
{
    /// <summary>
    /// How deep "include" may nest. Each level is a stack frame, so a file that includes itself
    /// (directly or through others) would otherwise end the process with a stack overflow, as it
    /// crashes redis-server; past this depth it is a configuration error instead.
    /// </summary>
    public const int MaxIncludeDepth = 32;

    public static List<string> Load(string[] args, ServerConfig config)
    {
        var problems = new List<string>();
        int i = 0;
        if (args.Length > 0 && !args[0].StartsWith("--", StringComparison.Ordinal))
        {
            string path = Path.GetFullPath(args[0]);
            config.ConfigFile = path;
            if (!File.Exists(path))
                problems.Add($"Fatal error, can't open config file '{path}': No such file or directory");
            else
                LoadFile(path, config, problems);
            i = 1;
        }

        while (i < args.Length)
        {
            string arg = args[i];
            if (!arg.StartsWith("--", StringComparison.Ordinal) || arg.Length == 2)
            {
                problems.Add($"Invalid argument '{arg}': options are written --name value");
                i++;
                continue;
            }
            string name = arg[2..];
            var values = new List<string>();
            i++;
            while (i < args.Length && !args[i].StartsWith("--", StringComparison.Ordinal))
                values.Add(args[i++]);
            string? problem = config.Set(name, string.Join(' ', values), atStartup: true);
            if (problem is not null)
                problems.Add($"option --{name}: {problem}");
        }
        return problems;
    }

    public static void LoadFile(string path, ServerConfig config, List<string> problems) => LoadFile(path, config, problems, 0);

    /// <summary>False once includes nested too deep: every file stops there, so a file that includes itself twice is not read 2^32 times.</summary>
    private static bool LoadFile(string path, ServerConfig config, List<string> problems, int depth)
    {
        string[] lines;
        try
        {
            lines = File.ReadAllLines(path);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // A missing or unreadable include (or a folder) is a problem to report, not an unhandled exception.
            problems.Add($"Fatal error, can't open config file '{path}': {ex.Message}");
            return true;
        }
        int lineNumber = 0;
        foreach (string raw in lines)
        {
            lineNumber++;
            string line = raw.Trim();
            if (line.Length == 0 || line[0] == '#')
                continue;
            List<string>? words = SplitLine(line);
            if (words is null)
            {
                problems.Add($"{path}:{lineNumber}: Unbalanced quotes in configuration line");
                continue;
            }
            string name = words[0];
            if (name.Equals("include", StringComparison.OrdinalIgnoreCase) && words.Count == 2)
            {
                if (depth >= MaxIncludeDepth)
                {
                    problems.Add($"{path}:{lineNumber}: '{line}': includes nest deeper than {MaxIncludeDepth} files (does a file include itself?)");
                    return false;
                }
                string included;
                try
                {
                    included = Path.GetFullPath(words[1], Path.GetDirectoryName(path)!);
                }
                catch (ArgumentException)
                {
                    problems.Add($"{path}:{lineNumber}: '{line}': not a valid file name"); // empty, or holding a NUL
                    continue;
                }
                if (!LoadFile(included, config, problems, depth + 1))
                    return false;
                continue;
            }
            string? problem = config.Set(name, string.Join(' ', words.Skip(1)), atStartup: true);
            if (problem is not null)
                problems.Add($"{path}:{lineNumber}: '{Shown(config, name, line)}': {problem}");
        }
        return true;
    }

    /// <summary>A line as a problem report quotes it: a secret setting's value is not printed.</summary>
    private static string Shown(ServerConfig config, string name, string line)
        => config.Find(name) is { Secret: true } || name.Equals(ServerConfig.UserDirective, StringComparison.OrdinalIgnoreCase)
            ? $"{name} {Redaction.Marker}" : line;

    /// <summary>Splits a configuration line with redis.conf's quoting ("..." with escapes, '...').</summary>
    public static List<string>? SplitLine(string line)
    {
        var words = new List<string>();
        var current = new StringBuilder();
        int i = 0;
        while (i < line.Length)
        {
            while (i < line.Length && char.IsWhiteSpace(line[i]))
                i++;
            if (i >= line.Length)
                break;
            current.Clear();
            char quote = line[i] is '"' or '\'' ? line[i++] : '\0';
            while (true)
            {
                if (i >= line.Length)
                {
                    if (quote != '\0')
                        return null;
                    break;
                }
                char c = line[i];
                if (quote == '\0' && char.IsWhiteSpace(c))
                    break;
                if (quote != '\0' && c == quote)
                {
                    i++;
                    if (i < line.Length && !char.IsWhiteSpace(line[i]))
                        return null;
                    break;
                }
                if (c == '\\' && quote == '"' && i + 1 < line.Length)
                {
                    char e = line[i + 1];
                    current.Append(e switch { 'n' => '\n', 'r' => '\r', 't' => '\t', _ => e });
                    i += 2;
                    continue;
                }
                current.Append(c);
                i++;
            }
            words.Add(current.ToString());
        }
        return words.Count == 0 ? null : words;
    }
}
