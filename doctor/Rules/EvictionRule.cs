using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>Keys are being evicted: the dataset does not fit, and reads will miss what was evicted.</summary>
public sealed class EvictionRule : IDoctorRule
{
    public string Id => "evictions";
    public string Area => "memory";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        long evicted = input.InfoInt64("stats", "evicted_keys");
        if (evicted == 0)
            yield break;
        long recent = input.RecentCount(MetricNames.EvictedKeysPerSecond, 300);
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = recent > 0 ? FindingSeverity.Warning : FindingSeverity.Info,
            Title = recent > 0 ? "Keys are being evicted" : "Keys were evicted earlier",
            Seen = $"{Human.Count(evicted)} keys evicted since start ({Human.Count(recent)} in the last 5 minutes) under maxmemory-policy {input.InfoField("memory", "maxmemory_policy")}.",
            Advice = "Evicted keys are gone: reads of them miss. If this is a cache, watch the hit ratio; otherwise raise maxmemory or shrink the dataset.",
            Evidence = new() { ["evicted_keys"] = evicted.ToString(System.Globalization.CultureInfo.InvariantCulture), ["evicted_last_5_min"] = recent.ToString(System.Globalization.CultureInfo.InvariantCulture) },
            Chart = MetricNames.EvictedKeysPerSecond,
        };
    }
}
