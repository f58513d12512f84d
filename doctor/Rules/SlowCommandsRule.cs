using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// Slow commands: each one stalled every client whose keys it held. Counts every slow call since
/// start or SLOWLOG RESET (the log itself is capped at slowlog-max-len) and names the clients that
/// made them.
/// </summary>
public sealed class SlowCommandsRule : IDoctorRule
{
    private const int CommandsShown = 5;
    private const int ClientsShown = 3;

    public string Id => "slow-commands";
    public string Area => "latency";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        var summary = input.SlowSummary ?? FromLog(input.SlowLog);
        if (summary.Calls == 0)
            yield break;
        var evidence = new Dictionary<string, string>
        {
            ["slow_calls"] = summary.Calls.ToString(CultureInfo.InvariantCulture),
            ["slowlog_len"] = input.SlowLog.Count.ToString(CultureInfo.InvariantCulture),
        };
        var commands = new List<SlowCommandTotal>(summary.Commands);
        commands.Sort((a, b) => b.MaxMicros.CompareTo(a.MaxMicros));
        var parts = new List<string>();
        long slowest = 0;
        foreach (var command in commands.GetRange(0, Math.Min(CommandsShown, commands.Count)))
        {
            evidence[command.Command] = $"{command.Calls} slow calls, slowest {Human.Micros(command.MaxMicros)}";
            parts.Add($"{command.Command} ({Human.Count(command.Calls)}x, up to {Human.Micros(command.MaxMicros)})");
            slowest = Math.Max(slowest, command.MaxMicros);
        }
        var who = new List<string>();
        foreach (var client in summary.Clients)
        {
            if (who.Count == ClientsShown)
                break;
            who.Add($"{Describe(client)}: {Human.Count(client.Calls)} slow, up to {Human.Micros(client.MaxMicros)}, last {client.LastCommand}");
        }
        if (who.Count > 0)
            evidence["clients"] = string.Join("; ", who);
        string since = input.SlowSummary is null ? "in the slow log" : "since start or SLOWLOG RESET";
        string capped = summary.Calls > input.SlowLog.Count && input.SlowLog.Count > 0
            ? $" (the log keeps the newest {Human.Count(input.SlowLog.Count)}, slowlog-max-len)"
            : "";
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = slowest >= 100_000 ? FindingSeverity.Warning : FindingSeverity.Info,
            Title = "Slow commands were logged",
            Seen = $"{Human.Count(summary.Calls)} calls took longer than slowlog-log-slower-than ({input.ConfigInt64("slowlog-log-slower-than")} µs) {since}{capped}: {string.Join(", ", parts)}."
                + (who.Count > 0 ? $" Made by {string.Join("; ", who)}." : ""),
            Advice = "A slow command holds its shards: clients of those keys wait. Replace whole-keyspace commands (KEYS, FLUSHALL, big MGET) with SCAN and smaller batches; see SLOWLOG GET for the arguments, and CLIENT LIST for the clients named.",
            Evidence = evidence,
            Chart = MetricNames.SlowCommandsPerSecond,
        };
    }

    private static string Describe(SlowClientTotal client)
    {
        string name = client.Name.Length > 0 ? $" ({client.Name})" : "";
        return $"client {client.Id}{name} at {client.Address}";
    }

    /// <summary>A package that predates the summary: what its log holds, by command and client address.</summary>
    private static SlowLogSummary FromLog(IReadOnlyList<SlowLogRecord> log)
    {
        var commands = new Dictionary<string, SlowCommandTotal>(StringComparer.OrdinalIgnoreCase);
        var clients = new Dictionary<string, SlowClientTotal>(StringComparer.Ordinal);
        foreach (var entry in log)
        {
            string name = entry.Arguments.Count > 0 ? entry.Arguments[0].ToLowerInvariant() : "?";
            commands[name] = commands.TryGetValue(name, out var c)
                ? c with { Calls = c.Calls + 1, Micros = c.Micros + entry.Micros, MaxMicros = Math.Max(c.MaxMicros, entry.Micros) }
                : new SlowCommandTotal(name, 1, entry.Micros, entry.Micros);
            string key = entry.ClientId != 0 ? entry.ClientId.ToString(CultureInfo.InvariantCulture) : entry.ClientAddress;
            clients[key] = clients.TryGetValue(key, out var k)
                ? k with { Calls = k.Calls + 1, MaxMicros = Math.Max(k.MaxMicros, entry.Micros) }
                : new SlowClientTotal(entry.ClientId, entry.ClientAddress, entry.ClientName, 1, entry.Micros, name, entry.UnixSeconds);
        }
        var byCalls = new List<SlowClientTotal>(clients.Values);
        byCalls.Sort((a, b) => b.Calls.CompareTo(a.Calls));
        return new SlowLogSummary(0, log.Count, [.. commands.Values], byCalls);
    }
}
