using System.Text;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// Everything a server holds, read through commands any Redis-compatible server answers: for each
/// database, every key with its value and absolute expiry (PEXPIRETIME). Two snapshots are equal
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
                    var value = client.Call("GET", key.Text!);
                    var deadline = client.Call("PEXPIRETIME", key.Text!);
                    if (value.IsNull)
                        continue; // expired between SCAN and GET
                    snapshot._entries[$"{db}:{key.Text}"] = $"{value.Text} (expires {deadline.Integer})";
                }
            }
            while (cursor != "0");
        }
        RespAssert.Ok(client.Call("SELECT", "0"));
        return snapshot;
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
