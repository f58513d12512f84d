using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Server.Diagnostics.Triggers;

/// <summary>
/// "Take a package when <see cref="Metric"/> stays above <see cref="Threshold"/> for
/// <see cref="Seconds"/>": one rule of the package-trigger-metrics setting, which lists them as
/// triples ("cpu_process_percent 90 30 latency_p99_usec 50000 10"), as Redis's save lists pairs.
/// </summary>
public sealed record MetricTrigger(string Metric, double Threshold, int Seconds)
{
    public override string ToString()
        => $"{Metric} {Threshold.ToString(CultureInfo.InvariantCulture)} {Seconds.ToString(CultureInfo.InvariantCulture)}";

    /// <summary>Parses the setting's value; null with the rules, or the problem in CONFIG SET's wording.</summary>
    public static string? TryParse(string value, out IReadOnlyList<MetricTrigger> rules)
    {
        rules = [];
        string[] words = value.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        if (words.Length % 3 != 0)
            return "Invalid package-trigger-metrics: expected triples of metric, threshold and seconds";
        var parsed = new List<MetricTrigger>(words.Length / 3);
        for (int i = 0; i < words.Length; i += 3)
        {
            string metric = words[i];
            if (!MetricNames.IsSeries(metric))
                return $"Invalid package-trigger-metrics: '{metric}' is not a metric of the history (GET /api/history lists them)";
            if (!double.TryParse(words[i + 1], NumberStyles.Float, CultureInfo.InvariantCulture, out double threshold) || !double.IsFinite(threshold))
                return $"Invalid package-trigger-metrics: threshold '{words[i + 1]}' is not a number";
            if (!int.TryParse(words[i + 2], NumberStyles.None, CultureInfo.InvariantCulture, out int seconds) || seconds is < 1 or > 86_400)
                return $"Invalid package-trigger-metrics: seconds '{words[i + 2]}' must be between 1 and 86400";
            parsed.Add(new MetricTrigger(metric, threshold, seconds));
        }
        rules = parsed;
        return null;
    }
}
