using System.Text;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// Everything a server holds, read through commands any Redis-compatible server answers: for each
/// database, every key with its value (of any type) and absolute expiry (PEXPIRETIME). Two snapshots are equal
/// when the datasets are, so a restart, a reload or another server can be compared exactly.
/// </summary>
public sealed class DatasetSnapshot
{
    private readonly SortedDictionary<string, string> _entries = new(StringComparer.Ordinal);

    public int Count => _entries.Count;

    public static DatasetSnapshot Read(RespClient client, int databases = 16)
    {
        var snapshot = new DatasetSnapshot();
        for (int db = 0; db < databases; db++)
        {
            RespAssert.Ok(client.Call("SELECT", db.ToString()));
            string cursor = "0";
            do
            {
                var page = client.Call("SCAN", cursor, "COUNT", "1000").Array;
                cursor = page[0].Text!;
                foreach (var key in page[1].Array)
                {
                    string? value = ValueOf(client, key.Text!);
                    var deadline = client.Call("PEXPIRETIME", key.Text!);
                    if (value is null)
                        continue; // expired between SCAN and reading it
                    snapshot._entries[$"{db}:{key.Text}"] = $"{value} (expires {deadline.Integer})";
                }
            }
            while (cursor != "0");
        }
        RespAssert.Ok(client.Call("SELECT", "0"));
        return snapshot;
    }

    /// <summary>
    /// The value as text, by type: a string as is; a list in order; a sorted set as member=score in
    /// order; a hash's pairs and a set's members sorted, since their order is unspecified. Null
    /// when the key is gone.
    /// </summary>
    private static string? ValueOf(RespClient client, string key)
    {
        string type = client.Call("TYPE", key).Text!;
        switch (type)
        {
            case "string":
                return client.Call("GET", key).Text;
            case "list":
                return "list[" + string.Join(",", client.Call("LRANGE", key, "0", "-1").Array.Select(v => v.Text)) + "]";
            case "set":
                return "set[" + string.Join(",", client.Call("SMEMBERS", key).Array.Select(v => v.Text).Order(StringComparer.Ordinal)) + "]";
            case "hash":
            {
                var items = client.Call("HGETALL", key).Array;
                var pairs = Enumerable.Range(0, items.Count / 2).Select(i => $"{items[2 * i].Text}={items[2 * i + 1].Text}");
                return "hash[" + string.Join(",", pairs.Order(StringComparer.Ordinal)) + "]";
            }
            case "zset":
            {
                var items = client.Call("ZRANGE", key, "0", "-1", "WITHSCORES").Array;
                return "zset[" + string.Join(",", Enumerable.Range(0, items.Count / 2).Select(i => $"{items[2 * i].Text}={items[2 * i + 1].Text}")) + "]";
            }
            case "stream":
                return StreamOf(client, key);
            case "none":
                return null;
            default:
                throw new InvalidOperationException($"{key} has type {type}, which the snapshot cannot read");
        }
    }

    /// <summary>
    /// A stream as its entries, its counters (XINFO STREAM's IDs and entries-added), and each group
    /// with its counters, consumers and pending entries (owner and delivery count; not the clock).
    /// </summary>
    private static string StreamOf(RespClient client, string key)
    {
        var text = new StringBuilder("stream[");
        foreach (var entry in client.Call("XRANGE", key, "-", "+").Array)
            text.Append(entry.Array[0].Text).Append('{').Append(string.Join(",", entry.Array[1].Array.Select(v => v.Text))).Append('}');
        var info = client.Call("XINFO", "STREAM", key).Array;
        for (int i = 0; i < info.Count; i += 2)
            if (info[i].Text is "last-generated-id" or "max-deleted-entry-id" or "entries-added" or "recorded-first-entry-id" or "length")
                text.Append(' ').Append(info[i].Text).Append('=').Append(info[i + 1].ToString());
        foreach (var group in client.Call("XINFO", "GROUPS", key).Array)
        {
            string name = group.Array[1].Text!;
            text.Append(" group ").Append(string.Join(",", group.Array.Select(v => v.ToString())));
            foreach (var consumer in client.Call("XINFO", "CONSUMERS", key, name).Array)
                text.Append(" consumer ").Append(consumer.Array[1].Text).Append(" pending=").Append(consumer.Array[3].Integer);
            foreach (var pending in client.Call("XPENDING", key, name, "-", "+", "1000000").Array)
                text.Append(" pel ").Append(pending.Array[0].Text).Append(':').Append(pending.Array[1].Text).Append(':').Append(pending.Array[3].Integer);
        }
        return text.Append(']').ToString();
    }

    public bool Contains(int db, string key) => _entries.ContainsKey($"{db}:{key}");

    public string? Value(int db, string key) => _entries.TryGetValue($"{db}:{key}", out var v) ? v : null;

    /// <summary>Fails with the differing keys listed when the two datasets are not identical.</summary>
    public void AssertSameAs(DatasetSnapshot expected, string context)
    {
        var problems = new StringBuilder();
        foreach (var (key, value) in expected._entries)
        {
            if (!_entries.TryGetValue(key, out var actual))
                problems.AppendLine($"missing {key} = {value}");
            else if (actual != value)
                problems.AppendLine($"{key}: expected {value}, got {actual}");
        }
        foreach (var key in _entries.Keys)
            if (!expected._entries.ContainsKey(key))
                problems.AppendLine($"unexpected {key} = {_entries[key]}");
        Assert.True(problems.Length == 0, $"{context}: datasets differ ({expected.Count} keys expected, {Count} found):\n{problems}");
    }
}
