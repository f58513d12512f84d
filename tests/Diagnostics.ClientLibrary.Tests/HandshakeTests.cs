using Diagnostics.ClientLibrary.Tests.Targets;
using StackExchange.Redis;
using Xunit.Abstractions;

namespace Diagnostics.ClientLibrary.Tests;

/// <summary>
/// What the library does when it connects (HELLO 3 when asked for RESP3, CLIENT SETNAME, CLIENT
/// SETINFO, its probes of INFO, CONFIG GET and the server's role) and what the server then shows
/// of that connection in CLIENT LIST, against both servers.
/// </summary>
[Collection(BothServersCollection.Name)]
public sealed class HandshakeTests(BothServers servers, ITestOutputHelper output)
{
    public static TheoryData<Target, RedisProtocol> TargetsAndProtocols => new()
    {
        { Target.Diagnostics, RedisProtocol.Resp2 },
        { Target.Redis, RedisProtocol.Resp2 },
        { Target.Diagnostics, RedisProtocol.Resp3 },
        { Target.Redis, RedisProtocol.Resp3 },
    };

    [Theory]
    [MemberData(nameof(TargetsAndProtocols))]
    public void ConnectsNegotiatesTheProtocolAndNamesItself(Target target, RedisProtocol protocol)
    {
        var log = new StringWriter();
        string name = $"app-{protocol}";
        using var connection = servers.Connect(target, protocol, name, log);
        var server = connection.GetServer(connection.GetEndPoints()[0]);

        output.WriteLine(log.ToString());
        Assert.True(connection.IsConnected, log.ToString());
        Assert.Equal(protocol, server.Protocol);
        Assert.Equal(Version.Parse(ServerCommandTests.ExpectedVersion(target)), server.Version);
        Assert.Equal(ServerType.Standalone, server.ServerType);
        Assert.False(server.IsReplica);

        // The connection that ran the handshake is the one CLIENT LIST shows under the name.
        var mine = server.ClientList().Where(c => c.Name == name).ToArray();
        Assert.NotEmpty(mine);
        Assert.All(mine, c => Assert.Equal(protocol, c.Protocol));
        Assert.Equal(name, (string?)connection.GetDatabase().Execute("CLIENT", "GETNAME"));
    }

    [Theory]
    [MemberData(nameof(TargetsAndProtocols))]
    public void RepliesDecodeAlikeOverEitherProtocol(Target target, RedisProtocol protocol)
    {
        using var connection = servers.Connect(target, protocol);
        var db = connection.GetDatabase();
        RedisKey hash = $"handshake:reply:{protocol}";
        db.KeyDelete(hash);
        db.HashSet(hash, [new HashEntry("a", "1"), new HashEntry("b", "2")]);

        // HGETALL is a map in RESP3 and a flat array in RESP2: the library gives the same entries.
        var entries = db.HashGetAll(hash).OrderBy(e => (string?)e.Name, StringComparer.Ordinal).ToArray();
        Assert.Equal([new HashEntry("a", "1"), new HashEntry("b", "2")], entries);
        var raw = db.Execute("HGETALL", hash);
        Assert.Equal(protocol == RedisProtocol.Resp3 ? ResultType.Map : ResultType.Array, raw.Resp3Type);
        Assert.Equal(2, raw.ToDictionary().Count);

        // A double is a double in RESP3 and a bulk string in RESP2.
        RedisKey zset = $"handshake:reply:{protocol}:z";
        db.SortedSetAdd(zset, "m", 1.5);
        var score = db.Execute("ZSCORE", zset, "m");
        Assert.Equal(protocol == RedisProtocol.Resp3 ? ResultType.Double : ResultType.BulkString, score.Resp3Type);
        Assert.Equal(1.5, (double)score);
        db.KeyDelete(zset);
    }
}
