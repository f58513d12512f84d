using System.Globalization;
using System.Text;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Configuration;

/// <summary>
/// latency-tracking-info-percentiles: a space-separated list of percentiles between 0 and 100,
/// validated with Redis's error texts and written as Redis prints doubles there (%f with the
/// trailing zeros and a bare dot cut: "50", "99.9").
/// </summary>
public static class LatencyPercentiles
{
    /// <summary>Parses the list; returns null on success or the reason it was refused.</summary>
    public static string? Parse(string value, out double[] percentiles)
    {
        percentiles = [];
        if (value.Length == 0)
            return null; // an empty list shows no percentiles
        // Split on every single space, as Redis does: two spaces in a row make an empty, invalid entry.
        string[] words = value.Split(' ');
        var parsed = new double[words.Length];
        for (int i = 0; i < words.Length; i++)
        {
            if (!NumberFormat.TryParseDouble(Encoding.UTF8.GetBytes(words[i]), out parsed[i]))
                return "Invalid latency-tracking-info-percentiles parameters";
            if (parsed[i] is < 0.0 or > 100.0)
                return "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";
        }
        percentiles = parsed;
        return null;
    }

    public static string Format(double[] percentiles) => string.Join(' ', percentiles.Select(Format));

    /// <summary>One percentile as Redis prints it in CONFIG GET and INFO's "p99.9" labels.</summary>
    public static string Format(double percentile)
    {
        string text = percentile.ToString("F6", CultureInfo.InvariantCulture);
        return text.Contains('.') ? text.TrimEnd('0').TrimEnd('.') : text;
    }
}
