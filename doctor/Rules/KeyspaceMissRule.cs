using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>Most key lookups miss: as a cache it is not helping, or clients read keys that are never written.</summary>
public sealed class KeyspaceMissRule : IDoctorRule
{
    private const long MinimumLookups = 1000;

    public string Id => "keyspace-misses";
    public string Area => "clients";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        long hits = input.InfoInt64("stats", "keyspace_hits");
        long misses = input.InfoInt64("stats", "keyspace_misses");
        if (hits + misses < MinimumLookups || misses <= hits)
            yield break;
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = FindingSeverity.Info,
            Title = "Most key lookups miss",
            Seen = $"{Human.Percent(misses * 100.0 / (hits + misses))} of {Human.Count(hits + misses)} key lookups found no key ({Human.Count(misses)} misses, {Human.Count(hits)} hits).",
            Advice = "For a cache, a low hit ratio means keys expire or are evicted before reuse, or are never set; check TTLs and evictions. Otherwise clients read keys that do not exist.",
            Evidence = new() { ["keyspace_hits"] = hits.ToString(System.Globalization.CultureInfo.InvariantCulture), ["keyspace_misses"] = misses.ToString(System.Globalization.CultureInfo.InvariantCulture) },
            Chart = MetricNames.KeyspaceMissesPerSecond,
        };
    }
}
