using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The command table as clients read it (COMMAND), side by side with redis-server 7.0: for every
/// command and subcommand both servers have, the arity, flags, ACL categories and key positions
/// agree, except for the differences listed here with their reason. Client libraries route on
/// these (movablekeys, readonly), and ACL category rules (+@keyspace) grant by them.
/// </summary>
public sealed class CommandTableSideBySideTests
{
    /// <summary>Where this server answers otherwise on purpose, or has not caught up; each says why.</summary>
    private static readonly Dictionary<string, string> KnownDifferences = new()
    {
        ["zrank"] = "accepts WITHSCORE (Redis 7.2), so its arity is -3 where 7.0's is 3",
        ["zrevrank"] = "accepts WITHSCORE (Redis 7.2), so its arity is -3 where 7.0's is 3",
        ["client"] = "containers carry their subcommands' routing flags and group category here; Redis's have none",
        ["function"] = "containers carry their subcommands' routing flags and group category here; Redis's have none",
        ["script"] = "containers carry their subcommands' routing flags and group category here; Redis's have none",
        ["pubsub"] = "containers carry their subcommands' routing flags and group category here; Redis's have none",
        ["object"] = "containers carry their group category here; Redis's have none",
        ["xgroup"] = "containers carry their group category here; Redis's have none",
        ["xinfo"] = "containers carry their group category here; Redis's have none",
        ["client|help"] = "HELP subcommands are flagged like their siblings here",
        ["pubsub|help"] = "HELP subcommands are flagged like their siblings here",
        ["object|help"] = "HELP subcommands are flagged like their siblings here",
        ["xgroup|help"] = "HELP subcommands are flagged like their siblings here",
        ["xinfo|help"] = "HELP subcommands are flagged like their siblings here",
        ["command|getkeys"] = "COMMAND GETKEYS takes a command without arguments here (-3); 7.0 asks for one (-4)",
    };

    private sealed record Described(long Arity, string Flags, string Categories, string Keys);

    [Fact]
    public void EveryCommandBothServersHaveIsDescribedAlike()
    {
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start();
        using var c = ours.Connect();
        using var r = redis.Connect();
        var ourTable = Table(c);
        var redisTable = Table(r);
        var differences = new List<string>();
        int compared = 0;
        foreach (var (name, theirs) in redisTable)
        {
            if (!ourTable.TryGetValue(name, out var mine))
                continue; // not implemented here (CLUSTER, MODULE, sharded pub/sub...): the compatibility tables say so
            compared++;
            if (mine == theirs || KnownDifferences.ContainsKey(name))
                continue;
            differences.Add($"{name}: ours {mine}, redis {theirs}");
        }
        Assert.True(differences.Count == 0, "described otherwise than redis-server:\n" + string.Join('\n', differences));
        Assert.True(compared > 300, $"compared {compared} commands");
        // A known difference that has gone is taken off the list.
        foreach (string name in KnownDifferences.Keys)
            Assert.True(ourTable.TryGetValue(name, out var mine) && redisTable.TryGetValue(name, out var theirs) && mine != theirs,
                $"{name} is listed as a known difference but is described alike (or is missing): take it off the list");
    }

    private static Dictionary<string, Described> Table(RespClient client)
    {
        var table = new Dictionary<string, Described>(StringComparer.Ordinal);
        foreach (var entry in client.Call("COMMAND").Array)
            Add(table, entry);
        return table;
    }

    private static void Add(Dictionary<string, Described> table, RespValue entry)
    {
        var fields = entry.Array;
        static string Sorted(RespValue list) => string.Join(' ', list.Array.Select(v => v.Text).Order(StringComparer.Ordinal));
        table[fields[0].Text!] = new Described(fields[1].Integer, Sorted(fields[2]), Sorted(fields[6]), $"{fields[3].Integer},{fields[4].Integer},{fields[5].Integer}");
        if (fields.Count > 9)
            foreach (var sub in fields[9].Array)
                Add(table, sub);
    }
}
