using System.Globalization;

namespace Diagnostics.Server.Configuration;

/// <summary>Redis's memory units: 1k = 1000, 1kb = 1024, likewise m/mb and g/gb; case-insensitive.</summary>
public static class MemorySize
{
    public static bool TryParse(string text, out long bytes)
    {
        bytes = 0;
        string t = text.Trim().ToLowerInvariant();
        long multiplier = 1;
        (string Suffix, long Factor)[] units = [("gb", 1L << 30), ("mb", 1L << 20), ("kb", 1L << 10), ("g", 1_000_000_000), ("m", 1_000_000), ("k", 1000), ("b", 1)];
        foreach (var (suffix, factor) in units)
        {
            if (t.EndsWith(suffix, StringComparison.Ordinal))
            {
                multiplier = factor;
                t = t[..^suffix.Length];
                break;
            }
        }
        if (!long.TryParse(t, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long n) || n < 0)
            return false;
        try
        {
            bytes = checked(n * multiplier);
            return true;
        }
        catch (OverflowException)
        {
            return false;
        }
    }
}
