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
    /// <summary>The value itself, secret or not: for CONFIG REWRITE and for restoring it; see <see cref="Shown"/> to display it.</summary>
    public Func<string> Get { get; }
    /// <summary>Applies a value; returns null on success or the reason it was refused.</summary>
    public Func<string, string?> Set { get; }
    /// <summary>False for settings that only take effect at start (port, bind, databases).</summary>
    public bool Mutable { get; }

    /// <summary>
    /// Names a file or directory the server writes (Redis's PROTECTED_CONFIG): CONFIG SET refuses
    /// it unless enable-protected-configs allows the client, so a client cannot make the server
    /// create folders and files wherever its user may write.
    /// </summary>
    public bool Protected { get; init; }

    public ConfigSecrecy Secrecy { get; init; }

    /// <summary>
    /// Puts the new values into effect once every pair of a CONFIG SET is set (Redis's apply
    /// functions): settings that only work together, like a certificate and its key, share one.
    /// Returns null on success or the reason, and a refusal leaves what was in effect as it was;
    /// CONFIG SET then restores every value it set. Not run at start, where the subsystem reads
    /// the settings as it starts.
    /// </summary>
    public Func<string?>? Apply { get; init; }

    /// <summary>
    /// CONFIG REWRITE removes the setting's lines while its value is empty instead of writing an
    /// empty value (Redis's rewriteConfigMarkAsProcessed for replicaof on a master).
    /// </summary>
    public bool RemovedWhenEmpty { get; init; }

    /// <summary>A password or key: redacted wherever a command's arguments or the configuration are shown.</summary>
    public bool Secret => Secrecy != ConfigSecrecy.Public;

    /// <summary>The value as shown outside CONFIG GET (HTTP API, debug package, studio): a set secret is the marker, an unset one empty.</summary>
    public string Shown() => Redacted(Get());

    /// <summary>The value as CONFIG GET answers it: Redis's passwords as they are, this server's own credentials redacted.</summary>
    public string ShownToClients() => Secrecy == ConfigSecrecy.Credential ? Redacted(Get()) : Get();

    // Empty means "not set", which is no secret and worth seeing.
    private string Redacted(string value) => Secret && value.Length > 0 ? Redaction.Marker : value;
}
