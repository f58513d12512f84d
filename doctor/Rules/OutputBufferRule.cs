using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// A client is not reading its output: it has had unsent replies or queued push messages for
/// several looks of the clients cron and taken none of them. A client reading a large reply
/// makes progress and is not accused, however much it has left; one that stopped reading is
/// accused however little, since the server also stops reading its commands meanwhile. Says how
/// close it is to its class's limit, before it is cut off.
/// </summary>
public sealed class OutputBufferRule : IDoctorRule
{
    // The cron looks once a second; this many seconds without progress is not a slow read.
    private const long StalledSeconds = 3;

    public string Id => "client-output-buffer";
    public string Area => "clients";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        string limits = input.Config.TryGetValue("client-output-buffer-limit", out var configured) ? configured : "";
        foreach (var client in input.Clients)
        {
            if (client.OutputStalledSeconds < StalledSeconds || client.OutputMemoryBytes == 0)
                continue;
            var limit = ClassLimit(limits, client.Class);
            string pushes = client.PendingPushBytes > 0 ? $" ({Human.Bytes(client.PendingPushBytes)} of it queued push messages: published, MONITOR or invalidations)" : "";
            string name = client.Name.Length > 0 ? $" name='{client.Name}'" : "";
            string toLimit = limit is { Hard: > 0 } or { Soft: > 0 }
                ? $" Its class ({client.Class}) is cut off at {Describe(limit.Value)}: it is at {Human.Percent(client.OutputMemoryBytes * 100.0 / Math.Max(1, limit.Value.Hard > 0 ? limit.Value.Hard : limit.Value.Soft))} of the {(limit.Value.Hard > 0 ? "hard" : "soft")} limit."
                : $" Its class ({client.Class}) has no output limit: it can hold memory without bound.";
            var evidence = new Dictionary<string, string>
            {
                ["client_id"] = client.Id.ToString(CultureInfo.InvariantCulture),
                ["omem"] = client.OutputMemoryBytes.ToString(CultureInfo.InvariantCulture),
                ["pending_push_bytes"] = client.PendingPushBytes.ToString(CultureInfo.InvariantCulture),
                ["stalled_seconds"] = client.OutputStalledSeconds.ToString(CultureInfo.InvariantCulture),
                ["class"] = client.Class,
                ["client-output-buffer-limit"] = limits,
            };
            yield return new Finding
            {
                Rule = Id,
                Area = Area,
                Severity = FindingSeverity.Warning,
                Title = $"Client {client.Id} is not reading its replies",
                Seen = $"Client id={client.Id} addr={client.Address}{name} holds {Human.Bytes(client.OutputMemoryBytes)} of unsent output{pushes} and has taken none of it for {client.OutputStalledSeconds} s "
                    + $"(last command {client.LastCommand}, {Human.Count(client.CommandsProcessed)} commands). While its output waits the server reads none of its commands.{toLimit}",
                Advice = "A stuck consumer holds server memory until it reads, and its own later commands hang. Fix the client (a subscriber must keep reading), "
                    + "CLIENT KILL ID it, or bound its class with client-output-buffer-limit so the server disconnects it.",
                Evidence = evidence,
                Chart = MetricNames.LargestOutputBufferBytes,
            };
        }
    }

    /// <summary>One class's "hard soft seconds" out of the setting ("normal 0 0 0 replica ... pubsub 33554432 8388608 60").</summary>
    internal static (long Hard, long Soft, long Seconds)? ClassLimit(string setting, string clientClass)
    {
        string[] words = setting.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        for (int i = 0; i + 3 < words.Length; i += 4)
        {
            if (words[i] != clientClass && !(clientClass == "replica" && words[i] == "slave"))
                continue;
            if (long.TryParse(words[i + 1], NumberStyles.Integer, CultureInfo.InvariantCulture, out long hard)
                && long.TryParse(words[i + 2], NumberStyles.Integer, CultureInfo.InvariantCulture, out long soft)
                && long.TryParse(words[i + 3], NumberStyles.Integer, CultureInfo.InvariantCulture, out long seconds))
                return (hard, soft, seconds);
        }
        return null;
    }

    internal static string Describe((long Hard, long Soft, long Seconds) limit)
    {
        var parts = new List<string>();
        if (limit.Hard > 0)
            parts.Add($"{Human.Bytes(limit.Hard)} (hard)");
        if (limit.Soft > 0)
            parts.Add($"{Human.Bytes(limit.Soft)} held for {limit.Seconds} s (soft)");
        return string.Join(" or ", parts);
    }
}
