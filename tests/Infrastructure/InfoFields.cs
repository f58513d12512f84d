namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>INFO's "field:value" lines as a dictionary.</summary>
public static class InfoFields
{
    public static Dictionary<string, string> Read(RespClient client, string section)
    {
        var reply = client.Call("INFO", section);
        Assert.False(reply.IsError, $"INFO {section} failed: {reply}");
        var fields = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var line in reply.Text!.Split("\r\n"))
        {
            int colon = line.IndexOf(':');
            if (colon > 0 && !line.StartsWith('#'))
                fields[line[..colon]] = line[(colon + 1)..];
        }
        return fields;
    }

    public static string Get(RespClient client, string section, string field)
        => Read(client, section).TryGetValue(field, out var value) ? value : throw new Xunit.Sdk.XunitException($"INFO {section} has no {field} field");

    public static long GetInt64(RespClient client, string section, string field) => long.Parse(Get(client, section, field));

    /// <summary>One "k=v,k=v" field of INFO (diskio, keyspace) as a dictionary.</summary>
    public static Dictionary<string, string> Parts(string value)
    {
        var parts = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var pair in value.Split(','))
        {
            int eq = pair.IndexOf('=');
            if (eq > 0)
                parts[pair[..eq]] = pair[(eq + 1)..];
        }
        return parts;
    }
}
