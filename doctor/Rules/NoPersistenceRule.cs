using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>The dataset is in memory only: a restart loses it.</summary>
public sealed class NoPersistenceRule : IDoctorRule
{
    public string Id => "no-persistence";
    public string Area => "persistence";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        if (input.InfoField("persistence", "aof_enabled") != "0")
            yield break;
        long keys = 0;
        if (input.Info.Sections.TryGetValue("keyspace", out var keyspace))
            foreach (var value in keyspace.Values)
                if (value.StartsWith("keys=", StringComparison.Ordinal) && long.TryParse(value.AsSpan(5, value.IndexOf(',') - 5), out long n))
                    keys += n;
        if (keys == 0)
            yield break;
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = FindingSeverity.Info,
            Title = "Data is not persisted",
            Seen = $"appendonly is off and the server holds {Human.Count(keys)} keys: a restart or crash loses them all.",
            Advice = "If the data matters, CONFIG SET appendonly yes (then CONFIG REWRITE): the server writes a base file and logs every write from then on.",
            Evidence = new() { ["aof_enabled"] = "0", ["keys"] = keys.ToString(System.Globalization.CultureInfo.InvariantCulture) },
        };
    }
}
