using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// used_memory close to maxmemory, or writes refused with OOM: says how many were refused, who
/// sent the data (clients by bytes received from them), the biggest keys, and which thread's
/// allocations hold the memory.
/// </summary>
public sealed class MemoryNearLimitRule : IDoctorRule
{
    private const double WarnShare = 0.9;
    private const int RecentSeconds = 300;
    private const int ClientsShown = 3;
    private const int KeysShown = 3;

    public string Id => "memory-near-maxmemory";
    public string Area => "memory";

    /// <summary>Whether used memory is near enough the limit for this rule (the live doctor then walks the keyspace for it).</summary>
    public static bool Applies(long used, long max) => max > 0 && used >= max * WarnShare;

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        long used = input.InfoInt64("memory", "used_memory");
        long max = input.InfoInt64("memory", "maxmemory");
        long refusedRecently = input.RecentCount(MetricNames.OomRejectionsPerSecond, RecentSeconds);
        if (max <= 0 || (!Applies(used, max) && refusedRecently == 0))
            yield break;
        long refusedTotal = ErrorCount(input, "OOM");
        string policy = input.InfoField("memory", "maxmemory_policy") ?? "noeviction";
        bool atLimit = policy == "noeviction" && used >= max;
        bool refusing = atLimit || refusedRecently > 0;
        var evidence = new Dictionary<string, string>
        {
            ["used_memory"] = used.ToString(CultureInfo.InvariantCulture),
            ["maxmemory"] = max.ToString(CultureInfo.InvariantCulture),
            ["maxmemory_policy"] = policy,
            ["oom_rejections"] = refusedTotal.ToString(CultureInfo.InvariantCulture),
            ["oom_rejections_last_5_min"] = refusedRecently.ToString(CultureInfo.InvariantCulture),
        };
        var seen = new List<string>
        {
            $"used_memory is {Human.Bytes(used)}, {Human.Percent(used * 100.0 / max)} of maxmemory {Human.Bytes(max)}, with maxmemory-policy {policy}.",
        };
        if (refusedTotal > 0 || refusedRecently > 0)
            seen.Add($"{Human.Count(refusedRecently)} commands were refused with OOM in the last 5 minutes ({Human.Count(refusedTotal)} since start or CONFIG RESETSTAT)"
                + (policy == "noeviction" ? "." : ": eviction could not free memory fast enough, or nothing was left to evict."));
        if (TopSenders(input) is { Length: > 0 } senders)
        {
            seen.Add($"Clients that sent the most data: {senders}.");
            evidence["top_clients"] = senders;
        }
        if (BiggestKeys(input) is { Length: > 0 } keys)
        {
            seen.Add($"Biggest keys: {keys}.");
            evidence["biggest_keys"] = keys;
        }
        if (HoldingThread(input, out string holder) is { } thread)
        {
            seen.Add(holder);
            evidence["thread"] = $"{thread.Name} ({thread.OsThreadId})";
            evidence["thread_bytes"] = thread.TrackedBytes.ToString(CultureInfo.InvariantCulture);
        }
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = refusing ? FindingSeverity.Critical : FindingSeverity.Warning,
            Title = atLimit ? "Writes are refused: memory is at maxmemory"
                : refusing ? "Writes were refused with OOM in the last 5 minutes"
                : "Memory is close to maxmemory",
            Seen = string.Join(" ", seen),
            Advice = policy == "noeviction"
                ? "Commands that add data fail with OOM. Raise maxmemory, delete or expire keys (the biggest are named), or choose an eviction policy (allkeys-lru for a cache); CLIENT KILL a client that should not be writing."
                : "Keys are evicted to stay under the limit, and writes fail when eviction cannot keep up; if the data is not disposable, raise maxmemory or reduce the dataset (the biggest keys are named).",
            Evidence = evidence,
            Chart = MetricNames.TrackedBytes,
        };
    }

    /// <summary>errorstat_&lt;code&gt;:count=N from INFO errorstats.</summary>
    private static long ErrorCount(DoctorInput input, string code)
    {
        string? field = input.InfoField("errorstats", "errorstat_" + code);
        return field is not null && field.StartsWith("count=", StringComparison.Ordinal)
            && long.TryParse(field.AsSpan(6), NumberStyles.Integer, CultureInfo.InvariantCulture, out long count) ? count : 0;
    }

    private static string TopSenders(DoctorInput input)
    {
        var clients = new List<ClientSnapshot>(input.Clients);
        clients.Sort((a, b) => b.NetInputBytes.CompareTo(a.NetInputBytes));
        var parts = new List<string>();
        foreach (var client in clients)
        {
            if (parts.Count == ClientsShown || client.NetInputBytes == 0)
                break;
            string name = client.Name.Length > 0 ? $" ({client.Name})" : "";
            parts.Add($"client {client.Id}{name} at {client.Address}: {Human.Bytes(client.NetInputBytes)} in {Human.Count(client.CommandsProcessed)} commands, last {client.LastCommand}");
        }
        return string.Join("; ", parts);
    }

    private static string BiggestKeys(DoctorInput input)
    {
        if (input.Keyspace is not { } keyspace)
            return "";
        var parts = new List<string>();
        foreach (var key in keyspace.Biggest)
        {
            if (parts.Count == KeysShown)
                break;
            parts.Add($"'{key.Key}' (db {key.Database}, {key.Type}, {Human.Bytes(key.Bytes)})");
        }
        string sample = keyspace.Complete ? "" : $" among the first {Human.Count(keyspace.KeysWalked)} of {Human.Count(keyspace.KeysTotal)} keys";
        return parts.Count == 0 ? "" : string.Join(", ", parts) + sample;
    }

    /// <summary>The thread whose tracked allocations hold the most memory, and what that means for its role.</summary>
    private static ThreadSnapshot? HoldingThread(DoctorInput input, out string sentence)
    {
        ThreadSnapshot? top = null;
        long total = 0;
        foreach (var thread in input.Threads)
        {
            total += Math.Max(0, thread.TrackedBytes);
            if (top is null || thread.TrackedBytes > top.TrackedBytes)
                top = thread;
        }
        sentence = "";
        if (top is null || top.TrackedBytes <= 0 || total <= 0)
            return null;
        // Keys and values are charged to the thread that allocated them: on a socket thread that
        // is the connections it serves writing data (commands run where they are read).
        string why = top.Role switch
        {
            "network I/O and commands" => "the keys and values written by the connections this socket thread serves (commands run on the thread that reads them)",
            "thread pool (HTTP, timers, commands)" => "data written by commands that ran on the thread pool (scripts, multi-shard commands) and the HTTP API's work",
            "main (start, load, shutdown)" => "data loaded from the AOF at start",
            "AOF rewrite" => "the rewrite's buffers",
            _ when top.Role.StartsWith("shard executor", StringComparison.Ordinal) => "the keys and values written through this shard's executor",
            _ => $"what this thread allocated",
        };
        sentence = $"{Human.Percent(top.TrackedBytes * 100.0 / total)} of tracked memory ({Human.Bytes(top.TrackedBytes)}) was allocated by thread {top.Name} ({top.OsThreadId}), {top.Role}: {why}.";
        return top;
    }
}
