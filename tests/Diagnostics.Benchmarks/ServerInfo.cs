using System.Globalization;

namespace Diagnostics.Benchmarks;

/// <summary>
/// Reads INFO fields from either server. The contract with our server: INFO memory carries
/// Redis's used_memory and, for the allocation figures, managed_allocated_bytes with the value
/// of GC.GetTotalAllocatedBytes(false). A server without a field yields null ("n/a").
/// </summary>
public static class ServerInfo
{
    public const string UsedMemory = "used_memory";
    public const string ManagedAllocatedBytes = "managed_allocated_bytes";

    /// <summary>INFO <paramref name="section"/> as field/value pairs, or null when the server has no INFO.</summary>
    public static Dictionary<string, string>? Read(RespConnection connection, string section)
    {
        var reply = connection.Call("INFO", section);
        if (reply.IsError || reply.Text is null)
            return null;
        var fields = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (string raw in reply.Text.Split('\n'))
        {
            string line = raw.TrimEnd('\r');
            int colon = line.IndexOf(':');
            if (line.Length == 0 || line[0] == '#' || colon <= 0)
                continue;
            fields[line[..colon]] = line[(colon + 1)..];
        }
        return fields;
    }

    public static long? ReadInt64(RespConnection connection, string section, string field)
    {
        var fields = Read(connection, section);
        if (fields is null || !fields.TryGetValue(field, out string? text))
            return null;
        return long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long value) ? value : null;
    }

    /// <summary>CONFIG GET name, or null when the server does not answer it.</summary>
    public static string? ConfigGet(RespConnection connection, string name)
    {
        var reply = connection.Call("CONFIG", "GET", name);
        if (reply.Items is { Count: >= 2 } items && items[1].Text is { } value)
            return value;
        return null;
    }
}
