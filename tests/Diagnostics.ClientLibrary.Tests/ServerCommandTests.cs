using Diagnostics.ClientLibrary.Tests.Targets;
using StackExchange.Redis;

namespace Diagnostics.ClientLibrary.Tests;

/// <summary>
/// IServer as operators' tools and health checks use it: INFO parsed into sections, CONFIG GET,
/// CLIENT LIST parsed into ClientInfo, KEYS by SCAN (cursor paging and a pattern), and PING's
/// round trip, against both servers.
/// </summary>
[Collection(BothServersCollection.Name)]
public sealed class ServerCommandTests(BothServers servers)
{
    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void InfoIsParsedIntoSectionsTheLibraryKnows(Target target)
    {
        using var connection = servers.Connect(target);
        var server = connection.GetServer(connection.GetEndPoints()[0]);

        var sections = server.Info().ToDictionary(g => g.Key, g => g.ToDictionary(p => p.Key, p => p.Value));
        foreach (var section in (string[])["Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Keyspace"])
            Assert.True(sections.ContainsKey(section), $"INFO has no {section} section: [{string.Join(", ", sections.Keys)}]");
        Assert.Equal(ExpectedVersion(target), sections["Server"]["redis_version"]);
        Assert.Equal("standalone", sections["Server"]["redis_mode"]);
        Assert.Equal("master", sections["Replication"]["role"]);
        Assert.True(long.Parse(sections["Clients"]["connected_clients"]) >= 1);
        Assert.True(long.Parse(sections["Memory"]["used_memory"]) > 0);

        var stats = server.Info("commandstats").Single();
        Assert.Equal("Commandstats", stats.Key);
        Assert.Contains(stats, p => p.Key == "cmdstat_info" && p.Value.StartsWith("calls=", StringComparison.Ordinal));
    }

    /// <summary>
    /// The version each server reports. This server deliberately reports the 7.2 line it follows
    /// (CLIENT SETINFO, CLIENT NO-TOUCH), which Debian's 7.0.15 does not have; the library reads
    /// the number to choose which commands it may use.
    /// </summary>
    public static string ExpectedVersion(Target target) =>
        target == Target.Diagnostics ? Diagnostics.Server.Commands.ConnectionCommands.CompatibleVersion : "7.0.15";

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void ConfigGetReturnsSettingsByPattern(Target target)
    {
        using var connection = servers.Connect(target);
        var server = connection.GetServer(connection.GetEndPoints()[0]);

        var maxmemory = server.ConfigGet("maxmemory-policy").ToDictionary(p => p.Key, p => p.Value);
        Assert.Equal(new Dictionary<string, string> { ["maxmemory-policy"] = "noeviction" }, maxmemory);
        Assert.Equal(servers.Port(target).ToString(), server.ConfigGet("port").Single().Value);
        var databases = server.ConfigGet("databases").Single();
        Assert.Equal("16", databases.Value);
        var many = server.ConfigGet("maxmemory*").Select(p => p.Key).ToHashSet();
        Assert.Contains("maxmemory", many);
        Assert.Contains("maxmemory-samples", many);
        Assert.Empty(server.ConfigGet("no-such-setting-at-all"));
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void ClientListIsParsedIntoClientInfo(Target target)
    {
        using var connection = servers.Connect(target, clientName: "listed-app");
        var server = connection.GetServer(connection.GetEndPoints()[0]);
        connection.GetDatabase(3).StringSet("server:clientlist:key", "x");

        var clients = server.ClientList();
        var mine = clients.Where(c => c.Name == "listed-app").ToArray();
        Assert.NotEmpty(mine);
        foreach (var client in mine)
        {
            Assert.True(client.Id > 0);
            Assert.Equal(System.Net.Sockets.AddressFamily.InterNetwork, ((System.Net.IPEndPoint)client.Address!).AddressFamily);
            Assert.True(client.AgeSeconds >= 0);
            Assert.False(string.IsNullOrEmpty(client.LastCommand));
        }
        // The library keeps two connections: the interactive one, which SELECTed database 3 for
        // the SET and is running CLIENT LIST, and the pub/sub one, subscribed to the library's
        // own channel and left on database 0.
        string raw = string.Join("\n", mine.Select(c => c.Raw));
        Assert.True(mine.Any(c => c.Database == 3 && c.LastCommand == "client|list" && c.ClientType == ClientType.Normal), raw);
        Assert.True(mine.Any(c => c.Database == 0 && c.LastCommand == "subscribe" && c.ClientType == ClientType.PubSub && c.SubscriptionCount == 1), raw);
        connection.GetDatabase(3).KeyDelete("server:clientlist:key");
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void KeysPagesThroughScanWithAPattern(Target target)
    {
        using var connection = servers.Connect(target);
        const int database = 5;
        var db = connection.GetDatabase(database);
        var server = connection.GetServer(connection.GetEndPoints()[0]);
        server.FlushDatabase(database);
        for (int i = 0; i < 250; i++)
            db.StringSet($"scan:match:{i}", i);
        for (int i = 0; i < 30; i++)
            db.StringSet($"scan:other:{i}", i);

        // pageSize 20 makes the library send SCAN with COUNT 20 and follow the cursor many times.
        var matched = server.Keys(database, "scan:match:*", pageSize: 20).Select(k => (string)k!).ToHashSet();
        Assert.Equal(250, matched.Count);
        Assert.Contains("scan:match:0", matched);
        Assert.Contains("scan:match:249", matched);
        Assert.DoesNotContain(matched, k => k.StartsWith("scan:other:", StringComparison.Ordinal));
        Assert.Equal(280, server.Keys(database, pageSize: 1000).Count());
        Assert.Equal(280, server.DatabaseSize(database));
        server.FlushDatabase(database);
        Assert.Empty(server.Keys(database));
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void SlowLogAndMemoryStatsAsOperatorsReadThem(Target target)
    {
        using var connection = servers.Connect(target);
        var server = connection.GetServer(connection.GetEndPoints()[0]);
        var db = connection.GetDatabase();

        // Every command is slow at a threshold of 0 µs; the setting is put back before asserting.
        server.SlowlogReset();
        server.ConfigSet("slowlog-log-slower-than", 0);
        try
        {
            db.StringSet("server:slowlog:key", "value");
        }
        finally
        {
            server.ConfigSet("slowlog-log-slower-than", 10000);
        }
        var entries = server.SlowlogGet(50);
        var set = entries.FirstOrDefault(e => e.Arguments.Length == 3 && e.Arguments[0] == "SET" && e.Arguments[1] == "server:slowlog:key");
        Assert.True(set is not null, "no SET entry in [" + string.Join("; ", entries.Select(e => string.Join(' ', e.Arguments))) + "]");
        Assert.True(set.Duration >= TimeSpan.Zero);
        Assert.InRange(set.Time, DateTime.UtcNow.AddMinutes(-1), DateTime.UtcNow.AddMinutes(1));
        server.SlowlogReset();
        Assert.DoesNotContain(server.SlowlogGet(50), e => e.Arguments.Length > 1 && e.Arguments[1] == "server:slowlog:key");

        var stats = server.MemoryStats().ToDictionary();
        foreach (var field in (string[])["peak.allocated", "total.allocated", "startup.allocated", "keys.count", "dataset.bytes"])
            Assert.True(stats.ContainsKey(field), $"MEMORY STATS has no {field}: [{string.Join(", ", stats.Keys)}]");
        Assert.True((long)stats["total.allocated"] > 0);
        db.KeyDelete("server:slowlog:key");
    }

    [Theory]
    [InlineData(Target.Diagnostics)]
    [InlineData(Target.Redis)]
    public void PingMeasuresARoundTrip(Target target)
    {
        using var connection = servers.Connect(target);
        var server = connection.GetServer(connection.GetEndPoints()[0]);
        var db = connection.GetDatabase();

        var latencies = new List<TimeSpan>();
        for (int i = 0; i < 20; i++)
        {
            latencies.Add(db.Ping());
            latencies.Add(server.Ping());
        }
        Assert.All(latencies, l => Assert.InRange(l, TimeSpan.Zero, TimeSpan.FromSeconds(2)));
        Assert.Equal("hello", (string?)db.Execute("ECHO", "hello"));
        Assert.Equal("PONG", (string?)db.Execute("PING"));
        var time = server.Time();
        Assert.InRange(time, DateTime.UtcNow.AddMinutes(-1), DateTime.UtcNow.AddMinutes(1));
    }
}
