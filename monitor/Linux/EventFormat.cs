using System.Globalization;

namespace Diagnostics.Monitor.Linux;

/// <summary>
/// A tracepoint's id and record layout, parsed at run time from its tracefs format file, so the
/// decoder follows whatever this kernel lays out instead of offsets compiled in. Hand-written
/// because the decoder Microsoft publishes for this (Microsoft.LinuxTracepoints.Decode) is not
/// in our package registry; the format grammar is a line per field:
/// <c>field:TYPE NAME;	offset:N;	size:N;	signed:N;</c>
/// </summary>
public sealed class EventFormat
{
    private readonly Dictionary<string, EventField> _fields;

    private EventFormat(string system, string name, int id, Dictionary<string, EventField> fields)
    {
        System = system;
        Name = name;
        Id = id;
        _fields = fields;
    }

    public string System { get; }
    public string Name { get; }
    public int Id { get; }
    public IReadOnlyCollection<EventField> Fields => _fields.Values;

    public EventField Field(string name) =>
        _fields.TryGetValue(name, out var field) ? field : throw new InvalidDataException($"tracepoint {System}/{Name} has no field '{name}' in this kernel's format");

    public bool TryField(string name, out EventField field) => _fields.TryGetValue(name, out field);

    /// <summary>Reads events/SYSTEM/NAME/format under a tracefs root or instance.</summary>
    public static EventFormat Load(string eventsDirectory, string system, string name)
    {
        string path = Path.Combine(eventsDirectory, system, name, "format");
        return Parse(system, name, File.ReadAllText(path));
    }

    public static EventFormat Parse(string system, string name, string text)
    {
        int id = -1;
        var fields = new Dictionary<string, EventField>(StringComparer.Ordinal);
        foreach (string rawLine in text.Split('\n'))
        {
            string line = rawLine.Trim();
            if (line.StartsWith("ID:", StringComparison.Ordinal))
                id = int.Parse(line.AsSpan(3).Trim(), CultureInfo.InvariantCulture);
            else if (line.StartsWith("field:", StringComparison.Ordinal))
            {
                var field = ParseField(line);
                fields[field.Name] = field;
            }
        }
        if (id < 0)
            throw new InvalidDataException($"tracepoint {system}/{name}: no ID line in its format file");
        return new EventFormat(system, name, id, fields);
    }

    private static EventField ParseField(string line)
    {
        string declaration = "", offset = "", size = "", signed = "0";
        foreach (string part in line.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            int colon = part.IndexOf(':');
            if (colon < 0)
                continue;
            string key = part[..colon], value = part[(colon + 1)..].Trim();
            switch (key)
            {
                case "field": declaration = value; break;
                case "offset": offset = value; break;
                case "size": size = value; break;
                case "signed": signed = value; break;
            }
        }
        // "unsigned int fd", "char rwbs[10]", "__data_loc char[] cmd", "const char * buf": the
        // name is the last word, without an array suffix.
        string name = declaration[(declaration.LastIndexOfAny([' ', '*']) + 1)..];
        int bracket = name.IndexOf('[');
        if (bracket >= 0)
            name = name[..bracket];
        string type = declaration[..^name.Length].Trim();
        if (bracket >= 0)
            type = declaration[..declaration.LastIndexOf(name, StringComparison.Ordinal)].Trim() + "[]";
        return new EventField(name, type, int.Parse(offset, CultureInfo.InvariantCulture), int.Parse(size, CultureInfo.InvariantCulture), signed == "1");
    }
}
