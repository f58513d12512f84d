using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>Connections were refused: maxclients reached, or protected mode turned remote clients away.</summary>
public sealed class RejectedConnectionsRule : IDoctorRule
{
    public string Id => "rejected-connections";
    public string Area => "clients";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        long rejected = input.InfoInt64("stats", "rejected_connections");
        if (rejected == 0)
            yield break;
        long connected = input.InfoInt64("clients", "connected_clients");
        long max = input.InfoInt64("clients", "maxclients");
        bool atLimit = max > 0 && connected >= max;
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = FindingSeverity.Warning,
            Title = "Connections were refused",
            Seen = $"{Human.Count(rejected)} connections were refused since start; {connected} clients are connected of maxclients {max}.",
            Advice = atLimit
                ? "The server is at maxclients: find who holds the connections (the client table, by address and name), fix leaking pools, or raise maxclients."
                : "Refusals happen at maxclients and, in protected mode, for remote clients without a password: check the log for the reason.",
            Evidence = new()
            {
                ["rejected_connections"] = rejected.ToString(System.Globalization.CultureInfo.InvariantCulture),
                ["connected_clients"] = connected.ToString(System.Globalization.CultureInfo.InvariantCulture),
                ["maxclients"] = max.ToString(System.Globalization.CultureInfo.InvariantCulture),
            },
            Chart = MetricNames.RejectedConnectionsPerSecond,
        };
    }
}
