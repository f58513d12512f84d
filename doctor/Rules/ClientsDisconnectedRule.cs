using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// Clients the server disconnected for a limit lately (output buffer, query buffer,
/// maxmemory-clients): the log says it once and a counter counts it; this names them.
/// </summary>
public sealed class ClientsDisconnectedRule : IDoctorRule
{
    private const long RecentMs = 15 * 60 * 1000;
    private const int Shown = 5;

    public string Id => "clients-disconnected";
    public string Area => "clients";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        var recent = new List<ClosedClient>();
        foreach (var closed in input.ClosedClients)
            if (input.TakenUnixMs - closed.UnixMs <= RecentMs)
                recent.Add(closed);
        if (recent.Count == 0)
            yield break;
        var parts = new List<string>();
        foreach (var closed in recent.GetRange(0, Math.Min(Shown, recent.Count)))
        {
            string name = closed.Name.Length > 0 ? $" name='{closed.Name}'" : "";
            string figure = closed.Reason switch
            {
                "query buffer limit" => $"{Human.Bytes(closed.QueryBufferBytes)} of unparsed input",
                "maxmemory-clients" => $"{Human.Bytes(closed.TotalMemoryBytes)} of client memory",
                _ => $"{Human.Bytes(closed.OutputMemoryBytes)} of unsent output ({closed.Class} class)",
            };
            string limit = closed.Limit.Length > 0 ? $", limit {closed.Limit}" : "";
            parts.Add($"id={closed.Id} addr={closed.Address}{name} for the {closed.Reason} with {figure}{limit}, "
                + $"{(input.TakenUnixMs - closed.UnixMs) / 1000} s ago (last command {closed.LastCommand})");
        }
        var first = recent[0];
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = FindingSeverity.Warning,
            Title = recent.Count == 1 ? $"Client {first.Id} was disconnected for the {first.Reason}" : $"{recent.Count} clients were disconnected for limits",
            Seen = $"In the last 15 minutes the server disconnected {Human.Count(recent.Count)} clients: {string.Join("; ", parts)}.",
            Advice = "A client cut off for its output stopped reading (a stuck or too slow subscriber, a huge reply it could not take); for its input, it sent a command larger than client-query-buffer-limit; "
                + "for maxmemory-clients, the clients together used too much memory and the biggest went. Fix the client, or raise the limit if it is wrong for this workload.",
            Evidence = new()
            {
                ["disconnected"] = recent.Count.ToString(CultureInfo.InvariantCulture),
                ["last_id"] = first.Id.ToString(CultureInfo.InvariantCulture),
                ["last_reason"] = first.Reason,
                ["last_address"] = first.Address,
                ["last_name"] = first.Name,
                ["last_omem"] = first.OutputMemoryBytes.ToString(CultureInfo.InvariantCulture),
            },
            Chart = MetricNames.LargestOutputBufferBytes,
        };
    }
}
