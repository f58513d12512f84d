using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// Commands were refused with TOOBUSY in the last five minutes: max-waiting-commands commands
/// already waited on threads for shards other commands held, and their waits had stalled (or four
/// times as many waited). Says how many were refused, the most that waited at once, the clients
/// refused most, and which commands hold the shards now.
/// </summary>
public sealed class TooBusyRule : IDoctorRule
{
    private const int WindowSeconds = 300;
    private const int ClientsShown = 3;
    private const int HoldersShown = 3;

    public string Id => "too-busy";
    public string Area => "latency";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        long refused = input.RecentCount(MetricNames.TooBusyRefusalsPerSecond, WindowSeconds);
        if (refused == 0)
            yield break;
        double peak = 0;
        foreach (double waiting in input.Recent(MetricNames.ShardWaitersPeak, WindowSeconds))
            peak = Math.Max(peak, waiting);
        string limit = input.Config.GetValueOrDefault("max-waiting-commands", "?");
        var evidence = new Dictionary<string, string>
        {
            ["refused_last_5_min"] = refused.ToString(CultureInfo.InvariantCulture),
            ["max_waiting"] = peak.ToString("0", CultureInfo.InvariantCulture),
            ["limit"] = limit,
        };
        var seen = new List<string>
        {
            $"{refused:N0} commands were refused with TOOBUSY in the last 5 minutes: {limit} commands (max-waiting-commands) or more already waited for shards other commands held, held up rather than moving (up to {peak:0} waited at once).",
        };

        var refusedClients = new List<ClientSnapshot>();
        foreach (var client in input.Clients)
            if (client.TooBusyRefusals > 0)
                refusedClients.Add(client);
        refusedClients.Sort((a, b) => b.TooBusyRefusals.CompareTo(a.TooBusyRefusals));
        if (refusedClients.Count > 0)
        {
            var parts = new List<string>();
            for (int i = 0; i < Math.Min(ClientsShown, refusedClients.Count); i++)
            {
                var client = refusedClients[i];
                string name = client.Name.Length > 0 ? $" ({client.Name})" : "";
                parts.Add($"client {client.Id}{name} at {client.Address}: {client.TooBusyRefusals:N0} refused, last command {client.LastCommand}");
            }
            string clients = string.Join("; ", parts);
            seen.Add($"Refused most: {clients}.");
            evidence["clients"] = clients;
        }

        var holders = input.LongestRunning(HoldersShown);
        if (holders.Count > 0)
        {
            string running = string.Join("; ", holders.Select(DoctorInput.Describe));
            seen.Add($"Longest-running commands now: {running}.");
            evidence["longest_running"] = running;
        }
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = FindingSeverity.Warning,
            Title = "Commands refused: too many waiting for shards",
            Seen = string.Join(" ", seen),
            Advice = "A command holding every shard (KEYS, FLUSHALL, DEBUG SLEEP, a long script) makes commands for several shards wait; the server refuses them past max-waiting-commands rather than let the waits starve its threads. "
                + "Find the holder above or in the in-flight list and replace it (SCAN instead of KEYS, smaller batches), or CLIENT KILL it; CLIENT PAUSE WRITE holds writers without refusals while you act. "
                + "Raise max-waiting-commands only with threads to spare: each waiting command holds one.",
            Evidence = evidence,
            Chart = MetricNames.TooBusyRefusalsPerSecond,
        };
    }
}
