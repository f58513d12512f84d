namespace Diagnostics.Server.Configuration;

/// <summary>What a secret reads as wherever it would otherwise be shown.</summary>
public static class Redaction
{
    /// <summary>Redis's own text for a redacted argument (SLOWLOG, MONITOR).</summary>
    public const string Marker = "(redacted)";

    public static ReadOnlySpan<byte> MarkerUtf8 => "(redacted)"u8;

    /// <summary>
    /// Every setting as CONFIG GET shows it, with passwords and keys replaced: the one copy of the
    /// configuration the HTTP API, the studio, the doctor and the debug package show.
    /// </summary>
    public static Dictionary<string, string> Settings(ServerConfig config)
    {
        var result = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var parameter in config.Parameters)
            result[parameter.Name] = parameter.Shown();
        return result;
    }
}
