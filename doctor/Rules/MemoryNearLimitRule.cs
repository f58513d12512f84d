using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>used_memory close to maxmemory: writes are about to be refused (noeviction) or keys evicted.</summary>
public sealed class MemoryNearLimitRule : IDoctorRule
{
    private const double WarnShare = 0.9;

    public string Id => "memory-near-maxmemory";
    public string Area => "memory";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        long used = input.InfoInt64("memory", "used_memory");
        long max = input.InfoInt64("memory", "maxmemory");
        if (max <= 0 || used < max * WarnShare)
            yield break;
        string policy = input.InfoField("memory", "maxmemory_policy") ?? "noeviction";
        bool refusing = policy == "noeviction" && used >= max;
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = refusing ? FindingSeverity.Critical : FindingSeverity.Warning,
            Title = refusing ? "Writes are refused: memory is at maxmemory" : "Memory is close to maxmemory",
            Seen = $"used_memory is {Human.Bytes(used)}, {Human.Percent(used * 100.0 / max)} of maxmemory {Human.Bytes(max)}, with maxmemory-policy {policy}.",
            Advice = policy == "noeviction"
                ? "Commands that add data now fail with OOM. Raise maxmemory, delete or expire keys, or choose an eviction policy (allkeys-lru for a cache)."
                : "Keys are evicted to stay under the limit; if they are not disposable, raise maxmemory or reduce the dataset.",
            Evidence = new()
            {
                ["used_memory"] = used.ToString(System.Globalization.CultureInfo.InvariantCulture),
                ["maxmemory"] = max.ToString(System.Globalization.CultureInfo.InvariantCulture),
                ["maxmemory_policy"] = policy,
            },
            Chart = MetricNames.TrackedBytes,
        };
    }
}
