namespace Diagnostics.Server.Configuration;

/// <summary>What a secret reads as wherever it would otherwise be shown.</summary>
public static class Redaction
{
    /// <summary>Redis's own text for a redacted argument (SLOWLOG, MONITOR).</summary>
    public const string Marker = "(redacted)";

    public static ReadOnlySpan<byte> MarkerUtf8 => "(redacted)"u8;
}
