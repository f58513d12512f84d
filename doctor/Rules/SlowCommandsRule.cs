using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>Commands in the slow log: each one stalled every client whose keys it held.</summary>
public sealed class SlowCommandsRule : IDoctorRule
{
    public string Id => "slow-commands";
    public string Area => "latency";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        if (input.SlowLog.Count == 0)
            yield break;
        var byCommand = new Dictionary<string, (int Count, long MaxMicros)>(StringComparer.OrdinalIgnoreCase);
        foreach (var entry in input.SlowLog)
        {
            string name = entry.Arguments.Count > 0 ? entry.Arguments[0].ToLowerInvariant() : "?";
            var (count, max) = byCommand.GetValueOrDefault(name);
            byCommand[name] = (count + 1, Math.Max(max, entry.Micros));
        }
        var worst = new List<KeyValuePair<string, (int Count, long MaxMicros)>>(byCommand);
        worst.Sort((a, b) => b.Value.MaxMicros.CompareTo(a.Value.MaxMicros));
        var evidence = new Dictionary<string, string>();
        var parts = new List<string>();
        foreach (var (name, (count, max)) in worst.GetRange(0, Math.Min(5, worst.Count)))
        {
            evidence[name] = $"{count} in the slow log, slowest {Human.Micros(max)}";
            parts.Add($"{name} ({count}x, up to {Human.Micros(max)})");
        }
        long slowest = worst[0].Value.MaxMicros;
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = slowest >= 100_000 ? FindingSeverity.Warning : FindingSeverity.Info,
            Title = "Slow commands were logged",
            Seen = $"The slow log holds {input.SlowLog.Count} commands over slowlog-log-slower-than ({input.ConfigInt64("slowlog-log-slower-than")} µs): {string.Join(", ", parts)}.",
            Advice = "A slow command holds its shards: clients of those keys wait. Replace whole-keyspace commands (KEYS, FLUSHALL, big MGET) with SCAN and smaller batches; see SLOWLOG GET for the arguments.",
            Evidence = evidence,
            Chart = MetricNames.SlowCommandsPerSecond,
        };
    }
}
