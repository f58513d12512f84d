using System.Buffers;
using System.Globalization;
using System.Text;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.DataTypes.Streams;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Execution;
using Diagnostics.Server.Memory;
using Diagnostics.Server.Persistence;
using Diagnostics.Server.Protocol;
using Diagnostics.Server.Tests.Infrastructure;
using Diagnostics.Server.UnitTests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// RdbWriter: whole RDB files written from a server's keyspace (every type and encoding, several
/// databases, expiry, both access hints, with and without compression, in several buffers) pass
/// redis-check-rdb, load into the real redis-server with the same data that the same commands give
/// it, and read back through RdbReader as Redis's own dump of that data does; plus the pieces whose
/// bytes must be Redis's: LZF, and the score text of listpack sorted sets.
/// </summary>
[Collection(InProcessServerCollection.Name)]
public sealed unsafe class RdbWriterTests
{
    private static readonly Encoding Bytes = Encoding.Latin1;

    [Theory]
    [InlineData(0.1, "0.10000000000000001")]
    [InlineData(2.5, "2.5")]
    [InlineData(-3.75, "-3.75")]
    [InlineData(1e20, "1e+20")]
    [InlineData(1.7976931348623157e308, "1.7976931348623157e+308")]
    [InlineData(5e-324, "4.9406564584124654e-324")]
    [InlineData(1e-310, "9.9999999999999694e-311")]
    [InlineData(1e-5, "1.0000000000000001e-05")]
    [InlineData(0.0001, "0.0001")]
    [InlineData(123456.789, "123456.789")]
    [InlineData(-0.30000000000000004, "-0.30000000000000004")]
    [InlineData(9.2233720368547758e18, "9.2233720368547758e+18")]
    [InlineData(3.0000000000000004, "3.0000000000000004")]
    [InlineData(100.25, "100.25")]
    // Integral scores within ±2^62 are integers (Redis's double2ll), so -0 is 0.
    [InlineData(3.0, "3")]
    [InlineData(-0.0, "0")]
    [InlineData(1e17, "100000000000000000")]
    [InlineData(1.2345678901234568e18, "1234567890123456768")]
    [InlineData(4611686018427387904.0, "4611686018427387904")]
    [InlineData(double.PositiveInfinity, "inf")]
    [InlineData(double.NegativeInfinity, "-inf")]
    public void ListpackScoresAreRedisText(double score, string expected)
    {
        Span<byte> text = stackalloc byte[ListpackScoreText.MaxLength];
        Assert.Equal(expected, Encoding.ASCII.GetString(text[..ListpackScoreText.Format(score, text)]));
    }

    [Fact]
    public void LzfRoundTripsAndGivesUpWhenItCannotSaveFourBytes()
    {
        using var lzf = new LzfCompressor();
        var random = new Random(7);
        var inputs = new List<byte[]>
        {
            Encoding.ASCII.GetBytes(new string('a', 21)),
            Encoding.ASCII.GetBytes(string.Concat(Enumerable.Range(0, 5000).Select(i => (i % 97) + ","))),
            Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat("abcdefghij", 300))),
            Enumerable.Range(0, 100_000).Select(i => (byte)(i * i % 251)).ToArray(),
        };
        for (int i = 0; i < 50; i++)
        {
            // Random text over a small alphabet: matches of every length and distance.
            var bytes = new byte[random.Next(21, 20_000)];
            for (int j = 0; j < bytes.Length; j++)
                bytes[j] = (byte)('a' + random.Next(random.Next(1, 6)));
            inputs.Add(bytes);
        }
        foreach (var input in inputs)
        {
            var output = new byte[input.Length];
            int compressed = lzf.Compress(input, output, input.Length - 4);
            Assert.True(compressed > 0 && compressed <= input.Length - 4, $"{input.Length} bytes did not compress ({compressed})");
            var back = new byte[input.Length];
            Assert.Equal(input.Length, Lzf.Decompress(output.AsSpan(0, compressed), back));
            Assert.Equal(input, back);
            // The same input again (the table now full of this call's positions) compresses the same.
            var again = new byte[input.Length];
            Assert.Equal(compressed, lzf.Compress(input, again, input.Length - 4));
            Assert.Equal(output.AsSpan(0, compressed).ToArray(), again.AsSpan(0, compressed).ToArray());
        }
        var noise = new byte[1000];
        random.NextBytes(noise);
        Assert.Equal(0, lzf.Compress(noise, new byte[1000], 996));
    }

    /// <summary>The commands both servers run: every type and encoding, expiry, two databases.</summary>
    private static IEnumerable<string[]> Dataset()
    {
        yield return ["SET", "string", "hello"];
        yield return ["SET", "integer", "-30000"];
        yield return ["SET", "big-integer", "123456789012345"];
        yield return ["SET", "compressible", string.Concat(Enumerable.Repeat("compressible text ", 100))];
        yield return ["SET", "expiring", "soon", "PXAT", "4102444800000"];
        yield return ["SET", "12345", "integer key"];
        yield return ["RPUSH", "list", "a", "1", "-70000", "b"];
        yield return ["RPUSH", "list:big", .. Enumerable.Range(0, 3000).Select(i => $"node element {i}")];
        yield return ["RPUSH", "list:wide", "x", new string('w', 20_000), "y"];
        yield return ["SADD", "intset", "1", "2", "-3", "9000000000"];
        yield return ["SADD", "set", "a", "b", "1"];
        yield return ["SADD", "set:big", .. Enumerable.Range(0, 700).Select(i => i.ToString())];
        yield return ["HSET", "hash", "f1", "v1", "f2", "2"];
        yield return ["HSET", "hash:big", .. Enumerable.Range(0, 600).SelectMany(i => new[] { $"f{i}", $"value {i}" })];
        yield return ["HSET", "hash:long", "f", new string('v', 100)];
        yield return ["ZADD", "zset", "1", "a", "2.5", "b", "-inf", "c", "1e20", "d"];
        yield return ["ZADD", "zset:big", .. Enumerable.Range(0, 300).SelectMany(i => new[] { (i / 7.0).ToString("R", CultureInfo.InvariantCulture), $"m{i}" })];
        yield return ["PEXPIREAT", "zset:big", "4102444800001"];
        yield return ["PFADD", "hll", .. Enumerable.Range(0, 100).Select(i => $"x{i}")];
        yield return ["XADD", "stream", "1-1", "a", "1", "b", "2"];
        for (int i = 2; i < 300; i++)
            yield return ["XADD", "stream", $"{i}-0", "field", $"value {i}"];
        yield return ["XDEL", "stream", "5-0"];
        yield return ["XGROUP", "CREATE", "stream", "readers", "0"];
        yield return ["XGROUP", "CREATE", "stream", "idle", "$"];
        yield return ["XREADGROUP", "GROUP", "readers", "alice", "COUNT", "3", "STREAMS", "stream", ">"];
        yield return ["XREADGROUP", "GROUP", "readers", "bob", "COUNT", "2", "STREAMS", "stream", ">"];
        yield return ["XACK", "stream", "readers", "1-1"];
        yield return ["XGROUP", "CREATECONSUMER", "stream", "idle", "carol"];
        yield return ["SELECT", "3"];
        yield return ["SET", "in-three", "3"];
        yield return ["RPUSH", "list", "three"];
        yield return ["SELECT", "0"];
    }

    [Fact]
    public void WholeFilesPassRedisCheckLoadInRedisAndReadBack()
    {
        using var dir = new TempDirectory("rdb-writer-");
        var config = new ServerConfig();
        Assert.Null(config.Set("dir", dir.Path, atStartup: true));
        Assert.Null(config.Set("appendonly", "no", atStartup: true));
        using var server = new DataServer(config);
        using var client = LocalClient.For(server);
        foreach (var command in Dataset())
        {
            string reply = client.Run(server, command);
            Assert.False(reply.StartsWith('-'), $"{string.Join(' ', command.Take(3))}: {reply}");
        }

        // The reference: redis-server given the same commands, and its own dump of them.
        DatasetSnapshot expected;
        Canonical redisDump;
        using (var redis = RealRedisServer.Start())
        using (var c = redis.Connect())
        {
            foreach (var command in Dataset())
                Assert.False(c.Call(command).IsError);
            expected = DatasetSnapshot.Read(c);
            RespAssert.Ok(c.Call("SAVE"));
            redisDump = Canonical.Of(File.ReadAllBytes(Path.Combine(redis.Directory, "dump.rdb")));
        }

        var variants = new[]
        {
            RdbWriteOptions.From(config) with { KeyHint = RdbKeyHint.IdleTime },
            RdbWriteOptions.From(config) with { KeyHint = RdbKeyHint.Frequency, Compression = false },
        };
        for (int v = 0; v < variants.Length; v++)
        {
            string name = $"ours-{v}.rdb";
            string path = dir.File(name);
            long keys = WriteFile(server, variants[v], path);
            Assert.Equal(expected.Count, keys);

            var check = ExternalTool.Run("redis-check-rdb", "redis-tools", [path]);
            Assert.True(check.ExitCode == 0 && check.StandardOutput.Contains("RDB looks OK"),
                $"redis-check-rdb {name} (exit {check.ExitCode}):\n{check.StandardOutput}\n{check.StandardError}");

            using (var redis = RealRedisServer.StartIn(dir.Path, "--dbfilename", name))
            using (var c = redis.Connect())
                DatasetSnapshot.Read(c).AssertSameAs(expected, $"redis-server loading {name}");

            var ours = Canonical.Of(File.ReadAllBytes(path));
            ours.AssertSameAs(redisDump, name);
        }
    }

    /// <summary>Serializes every database, a buffer per shard taken out as it fills, the checksum carried across them.</summary>
    private static long WriteFile(DataServer server, RdbWriteOptions options, string path)
    {
        var shards = server.Keyspace.Shards;
        foreach (var shard in shards)
            shard.EnterInline();
        try
        {
            using var file = File.Create(path);
            using var header = new RdbWriter(options);
            header.WriteHeader();
            header.WriteStandardAux(DateTimeOffset.UtcNow.ToUnixTimeSeconds(), TrackedAllocator.TotalBytes, aofBase: false);
            ulong crc = header.UpdateChecksum(0);
            file.Write(header.Written);
            long written = 0;
            for (int db = 0; db < server.Keyspace.DatabaseCount; db++)
            {
                long keys = 0, expires = 0;
                foreach (var shard in shards)
                {
                    keys += shard.Databases[db].Count;
                    expires += shard.Databases[db].ExpiresCount;
                }
                if (keys == 0)
                    continue;
                using var part = new RdbWriter(options);
                part.WriteSelectDb(db);
                part.WriteResizeDb(keys, expires);
                foreach (var shard in shards)
                {
                    var visitor = new KeyWriter(part, shard.Databases[db]);
                    shard.Databases[db].Keys.ForEach(ref visitor);
                    written += visitor.Written;
                    crc = part.UpdateChecksum(crc);
                    file.Write(part.Written);
                    part.Clear();
                }
            }
            using var tail = new RdbWriter(options);
            tail.WriteEof(crc);
            file.Write(tail.Written);
            return written;
        }
        finally
        {
            for (int s = shards.Length - 1; s >= 0; s--)
                shards[s].ExitInline();
        }
    }

    private struct KeyWriter(RdbWriter writer, Database database) : IEntryVisitor
    {
        public long Written;

        public void Visit(Entry* e)
        {
            if (writer.WriteKey(e, database.ExpireAtOf(e), 0))
                Written++;
        }
    }

    /// <summary>
    /// What an RDB holds, as RdbReader reports it, in a form two dumps of the same data share: the
    /// databases' keys and expiries, sets and hashes sorted (their order is the table's), sorted
    /// sets by score, streams by their nodes, counters, groups, pending IDs and owners (not the
    /// delivery and seen times, which are each server's clock).
    /// </summary>
    private sealed class Canonical : IRdbVisitor
    {
        private readonly SortedDictionary<string, string> _keys = new(StringComparer.Ordinal);
        private readonly List<string> _databases = [];
        private int _db;
        private string? _key;
        private long _expireAt;
        private RdbCollection _kind;
        private List<string> _elements = [];
        private List<(string Member, double Score)> _scored = [];
        private StringBuilder _stream = new();

        public static Canonical Of(byte[] rdb)
        {
            var visitor = new Canonical();
            Assert.Equal(rdb.Length, RdbReader.Read(new MemoryStream(rdb), visitor));
            return visitor;
        }

        public void AssertSameAs(Canonical expected, string context)
        {
            Assert.Equal(expected._databases, _databases);
            Assert.Equal(expected._keys.Keys, _keys.Keys);
            foreach (var (key, value) in expected._keys)
                Assert.True(value == _keys[key], $"{context}: {key}\n  redis: {Cut(value)}\n  ours:  {Cut(_keys[key])}");
        }

        private static string Cut(string text) => text.Length > 600 ? text[..600] + "..." : text;

        public void SelectDatabase(int index)
        {
            _db = index;
            _databases.Add($"select {index}");
        }

        public void ResizeDatabase(long keys, long expires) => _databases.Add($"resize {keys} {expires}");

        public void String(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, long expireAtUnixMs)
            => _keys[$"{_db}:{Bytes.GetString(key)}"] = $"string {Bytes.GetString(value)} expires {expireAtUnixMs}";

        public void BeginCollection(RdbCollection kind, ReadOnlySpan<byte> key, long expireAtUnixMs, long sizeHint)
        {
            _key = $"{_db}:{Bytes.GetString(key)}";
            _expireAt = expireAtUnixMs;
            _kind = kind;
            _elements = [];
            _scored = [];
        }

        public void ListElement(ReadOnlySpan<byte> element) => _elements.Add(Bytes.GetString(element));
        public void SetMember(ReadOnlySpan<byte> member) => _elements.Add(Bytes.GetString(member));
        public void HashField(ReadOnlySpan<byte> field, ReadOnlySpan<byte> value) => _elements.Add($"{Bytes.GetString(field)}={Bytes.GetString(value)}");
        public void SortedSetMember(ReadOnlySpan<byte> member, double score) => _scored.Add((Bytes.GetString(member), score));

        public void EndCollection()
        {
            IEnumerable<string> elements = _kind switch
            {
                RdbCollection.List => _elements,
                RdbCollection.SortedSet => _scored.OrderBy(s => s.Score).ThenBy(s => s.Member, StringComparer.Ordinal)
                    .Select(s => $"{s.Member}@{s.Score.ToString("R", CultureInfo.InvariantCulture)}"),
                _ => _elements.Order(StringComparer.Ordinal),
            };
            _keys[_key!] = $"{_kind} [{string.Join(",", elements)}] expires {_expireAt}";
        }

        public void BeginStream(ReadOnlySpan<byte> key, long expireAtUnixMs)
        {
            _key = $"{_db}:{Bytes.GetString(key)}";
            _stream = new StringBuilder($"stream expires {expireAtUnixMs}");
        }

        public void StreamNode(StreamId master, ReadOnlySpan<byte> listpack)
            => _stream.Append($" node {master} {Convert.ToHexString(listpack)}");

        public void StreamCounters(long length, StreamId lastId, StreamId firstId, StreamId maxDeletedId, long entriesAdded)
            => _stream.Append($" length {length} last {lastId} first {firstId} max-deleted {maxDeletedId} added {entriesAdded}");

        public void StreamGroup(ReadOnlySpan<byte> name, StreamId lastDelivered, long entriesRead)
            => _stream.Append($" group {Bytes.GetString(name)} {lastDelivered} read {entriesRead}");

        public void StreamGroupPending(StreamId id, long deliveryTimeUnixMs, long deliveryCount) => _stream.Append($" pending {id}x{deliveryCount}");
        public void StreamConsumer(ReadOnlySpan<byte> name, long seenTimeUnixMs) => _stream.Append($" consumer {Bytes.GetString(name)}");
        public void StreamConsumerPending(StreamId id) => _stream.Append($" owns {id}");
        public void EndStream() => _keys[_key!] = _stream.ToString();
        public void Aux(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) { }
    }
}
