using System.Globalization;
using System.Text;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// Redis 7's multi-part AOF manifest: which base file and which incremental files, in order, make
/// up the dataset. One line per file, "file NAME seq N type b|i|h". The manifest is the only
/// source of truth at load time, and it is replaced atomically (write a temp file, fsync, rename,
/// fsync the directory), so a crash at any moment leaves either the old set of files or the new.
/// </summary>
public sealed class AofManifest
{
    public const string BaseSuffix = ".base";
    public const string IncrSuffix = ".incr";
    public const string AofExtension = ".aof";
    public const string RdbExtension = ".rdb";
    public const string ManifestSuffix = ".manifest";
    private const string TempPrefix = "temp-";

    public AofFileInfo? Base { get; set; }
    public List<AofFileInfo> Incrementals { get; } = [];
    public List<AofFileInfo> History { get; } = [];
    public long CurrentBaseSequence { get; set; }
    public long CurrentIncrSequence { get; set; }

    public static string ManifestName(string baseName) => baseName + ManifestSuffix;
    /// <summary>Where <see cref="Persist"/> writes the manifest before renaming it into place.</summary>
    public static string TempManifestName(string baseName) => TempPrefix + ManifestName(baseName);
    /// <summary>A base file's name: ".base.rdb" when it is an RDB (aof-use-rdb-preamble), as Redis names it.</summary>
    public static string BaseFileName(string baseName, long sequence, bool rdb = false) => $"{baseName}.{sequence}{BaseSuffix}{(rdb ? ".rdb" : AofExtension)}";
    public static string IncrFileName(string baseName, long sequence) => $"{baseName}.{sequence}{IncrSuffix}{AofExtension}";

    /// <summary>Files in load order: the base, then the incremental files.</summary>
    public IEnumerable<AofFileInfo> LoadOrder()
    {
        if (Base is not null)
            yield return Base;
        foreach (var incr in Incrementals)
            yield return incr;
    }

    public AofManifest Clone()
    {
        var copy = new AofManifest { Base = Base, CurrentBaseSequence = CurrentBaseSequence, CurrentIncrSequence = CurrentIncrSequence };
        copy.Incrementals.AddRange(Incrementals);
        copy.History.AddRange(History);
        return copy;
    }

    public string Format()
    {
        var text = new StringBuilder();
        if (Base is not null)
            AppendLine(text, Base);
        foreach (var file in History)
            AppendLine(text, file);
        foreach (var file in Incrementals)
            AppendLine(text, file);
        return text.ToString();
    }

    private static void AppendLine(StringBuilder text, AofFileInfo file)
    {
        char type = file.Type switch { AofFileType.Base => 'b', AofFileType.Incremental => 'i', _ => 'h' };
        text.Append("file ").Append(Quote(file.Name)).Append(" seq ")
            .Append(file.Sequence.ToString(CultureInfo.InvariantCulture)).Append(" type ").Append(type).Append('\n');
    }

    /// <summary>Names with spaces or quotes are written quoted, as Redis's sdscatrepr would.</summary>
    private static string Quote(string name)
    {
        if (name.AsSpan().IndexOfAny(" \"\\\t\r\n") < 0)
            return name;
        var quoted = new StringBuilder("\"");
        foreach (char ch in name)
        {
            if (ch is '"' or '\\') quoted.Append('\\').Append(ch);
            else if (ch == '\n') quoted.Append("\\n");
            else if (ch == '\r') quoted.Append("\\r");
            else if (ch == '\t') quoted.Append("\\t");
            else quoted.Append(ch);
        }
        return quoted.Append('"').ToString();
    }

    public static AofManifest Parse(string text, string manifestName)
    {
        var manifest = new AofManifest();
        int lineNumber = 0;
        foreach (var rawLine in text.Split('\n'))
        {
            lineNumber++;
            string line = rawLine.TrimEnd('\r');
            if (line.Length == 0 || line.StartsWith('#'))
                continue;
            var words = SplitArgs(line) ?? throw Invalid(manifestName, lineNumber, "unbalanced quotes");
            if (words.Count % 2 != 0)
                throw Invalid(manifestName, lineNumber, "the number of keys and values does not match");
            string? name = null, seq = null, type = null;
            for (int i = 0; i < words.Count; i += 2)
            {
                switch (words[i])
                {
                    case "file": name = words[i + 1]; break;
                    case "seq": seq = words[i + 1]; break;
                    case "type": type = words[i + 1]; break;
                }
            }
            if (name is null || seq is null || type is null || type.Length != 1
                || !long.TryParse(seq, NumberStyles.None, CultureInfo.InvariantCulture, out long sequence)
                || name.Contains('/') || name.Contains('\\'))
                throw Invalid(manifestName, lineNumber, "a line must name a plain file, its seq and its type");
            switch (type[0])
            {
                case 'b':
                    if (manifest.Base is not null)
                        throw Invalid(manifestName, lineNumber, "more than one base file");
                    manifest.Base = new AofFileInfo(name, sequence, AofFileType.Base);
                    manifest.CurrentBaseSequence = sequence;
                    break;
                case 'i':
                    if (sequence <= manifest.CurrentIncrSequence)
                        throw Invalid(manifestName, lineNumber, "incremental files out of sequence order");
                    manifest.Incrementals.Add(new AofFileInfo(name, sequence, AofFileType.Incremental));
                    manifest.CurrentIncrSequence = sequence;
                    break;
                case 'h':
                    manifest.History.Add(new AofFileInfo(name, sequence, AofFileType.History));
                    break;
                default:
                    throw Invalid(manifestName, lineNumber, $"unknown file type '{type}'");
            }
        }
        return manifest;
    }

    private static AofFormatException Invalid(string manifestName, int line, string reason)
        => new($"Invalid AOF manifest file format in {manifestName} line {line}: {reason}");

    /// <summary>Splits a line into words; double-quoted words may hold spaces and backslash escapes.</summary>
    private static List<string>? SplitArgs(string line)
    {
        var words = new List<string>();
        int i = 0;
        while (i < line.Length)
        {
            while (i < line.Length && line[i] == ' ')
                i++;
            if (i == line.Length)
                break;
            var word = new StringBuilder();
            if (line[i] == '"')
            {
                i++;
                while (true)
                {
                    if (i >= line.Length)
                        return null;
                    char ch = line[i++];
                    if (ch == '"')
                        break;
                    if (ch == '\\' && i < line.Length)
                    {
                        char escaped = line[i++];
                        word.Append(escaped switch { 'n' => '\n', 'r' => '\r', 't' => '\t', _ => escaped });
                    }
                    else
                        word.Append(ch);
                }
            }
            else
            {
                while (i < line.Length && line[i] != ' ')
                    word.Append(line[i++]);
            }
            words.Add(word.ToString());
        }
        return words;
    }

    /// <summary>Reads the manifest of <paramref name="directory"/>, or null when there is none.</summary>
    public static AofManifest? Load(string directory, string baseName)
    {
        string path = Path.Combine(directory, ManifestName(baseName));
        if (!File.Exists(path))
            return null;
        using var file = DiskFile.OpenRead(path);
        var bytes = new byte[checked((int)file.Length)];
        int total = 0;
        while (total < bytes.Length)
        {
            int read = file.Read(bytes.AsSpan(total), total, Diagnostics.Disk.DiskIoPurpose.Manifest);
            if (read == 0)
                break;
            total += read;
        }
        return Parse(Encoding.UTF8.GetString(bytes, 0, total), ManifestName(baseName));
    }

    /// <summary>Replaces the manifest atomically: temp file, fdatasync, rename, directory fsync.</summary>
    public void Persist(string directory, string baseName)
    {
        string name = ManifestName(baseName);
        string temp = Path.Combine(directory, TempManifestName(baseName));
        byte[] bytes = Encoding.UTF8.GetBytes(Format());
        using (var file = DiskFile.Create(temp))
        {
            file.Write(bytes, 0, Diagnostics.Disk.DiskIoPurpose.Manifest);
            file.Sync(Diagnostics.Disk.DiskIoPurpose.Manifest);
        }
        File.Move(temp, Path.Combine(directory, name), overwrite: true);
        DiskFile.SyncDirectory(directory);
    }
}
