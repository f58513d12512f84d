namespace Diagnostics.Server.Configuration;

/// <summary>One CONFIG parameter: how to read it, how to validate and apply a new value.</summary>
public sealed class ConfigParameter
{
    public ConfigParameter(string name, Func<string> get, Func<string, string?> set, bool mutable = true, params string[] aliases)
    {
        Name = name;
        Get = get;
        Set = set;
        Mutable = mutable;
        Aliases = aliases;
    }

    public string Name { get; }
    public IReadOnlyList<string> Aliases { get; }
    public Func<string> Get { get; }
    /// <summary>Applies a value; returns null on success or the reason it was refused.</summary>
    public Func<string, string?> Set { get; }
    /// <summary>False for settings that only take effect at start (port, bind, databases).</summary>
    public bool Mutable { get; }
    /// <summary>A password or key: redacted wherever configuration leaves the server (HTTP API, debug package).</summary>
    public bool Secret { get; init; }
}
