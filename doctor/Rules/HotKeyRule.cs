using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// One key takes a large share of the commands (the always-on sampling): a key lives on one
/// shard, whose commands run one at a time, so one hot key caps throughput at one core however
/// many the server has. Names the key, the command and the clients.
/// </summary>
public sealed class HotKeyRule : IDoctorRule
{
    private const double HotShare = 0.25;
    private const double MinPerSecond = 1000;
    // Fewer decayed samples than this is too little traffic to call anything hot.
    private const long MinSamples = 64;
    private const int OthersShown = 2;

    public string Id => "hot-key";
    public string Area => "cpu";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        if (input.HotKeys is not { Keys.Count: > 0, Samples: >= MinSamples } report)
            yield break;
        var top = report.Keys[0];
        if (top.Share < HotShare || top.EstimatedPerSecond < MinPerSecond)
            yield break;
        string clients = top.Clients.Count > 0 ? $" from clients {string.Join(", ", top.Clients)}" : "";
        var others = new List<string>();
        for (int i = 1; i < report.Keys.Count && others.Count < OthersShown; i++)
        {
            var key = report.Keys[i];
            others.Add($"'{key.Key}' ({Human.Percent(key.Share * 100)}, {key.Command})");
        }
        string next = others.Count > 0 ? $" Next: {string.Join(", ", others)}." : "";
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = top.Share >= 0.5 ? FindingSeverity.Warning : FindingSeverity.Info,
            Title = $"Key '{top.Key}' is hot",
            Seen = $"Key '{top.Key}' (db {top.Database}, shard {top.Shard}) takes about {Human.Percent(top.Share * 100)} of the commands sampled over the last seconds, about {Human.Count(top.EstimatedPerSecond)} a second, "
                + $"last by {top.Command}{clients}.{next}",
            Advice = "A key lives on one shard, whose commands run one at a time: one hot key uses at most one core, and every other key of its shard waits behind it. "
                + "Spread the load (one counter per client or per time slice, summed when read; a cache in front for a hot read), or batch the updates.",
            Evidence = new()
            {
                ["key"] = top.Key,
                ["db"] = top.Database.ToString(CultureInfo.InvariantCulture),
                ["shard"] = top.Shard.ToString(CultureInfo.InvariantCulture),
                ["share_percent"] = (top.Share * 100).ToString("0", CultureInfo.InvariantCulture),
                ["per_second"] = ((long)top.EstimatedPerSecond).ToString(CultureInfo.InvariantCulture),
                ["command"] = top.Command,
                ["clients"] = string.Join(",", top.Clients),
            },
            Chart = MetricNames.OpsPerSecond,
        };
    }
}
