namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>Reads one client's line of CLIENT LIST as its name=value fields.</summary>
public static class ClientListFields
{
    /// <summary>The CLIENT LIST fields of the client named <paramref name="name"/>, or null when it is gone.</summary>
    public static Dictionary<string, string>? Of(RespClient control, string name)
    {
        foreach (var line in control.Call("CLIENT", "LIST").Text!.Split('\n', StringSplitOptions.RemoveEmptyEntries))
        {
            var fields = new Dictionary<string, string>(StringComparer.Ordinal);
            foreach (var pair in line.Trim().Split(' '))
            {
                int eq = pair.IndexOf('=');
                if (eq > 0)
                    fields[pair[..eq]] = pair[(eq + 1)..];
            }
            if (fields.GetValueOrDefault("name") == name)
                return fields;
        }
        return null;
    }
}
