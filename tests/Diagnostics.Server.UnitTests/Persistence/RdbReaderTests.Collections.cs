using System.Buffers.Binary;
using System.Globalization;
using System.Text;
using Diagnostics.Server.Persistence;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// Lists, sets, hashes and sorted sets in RDB files: every encoding Redis 7.0 writes, from dumps
/// of the real redis-server, and the older ones (ziplist, zipmap, quicklist 1, text scores)
/// hand-built from their documented layouts; corrupt packed values; and a crafted base file
/// loaded by the server itself.
/// </summary>
public sealed partial class RdbReaderTests
{
    [Fact]
    public void EveryCollectionEncodingOfRedisSevenIsRead()
    {
        string bigElement = new('p', 10_000);   // over list-max-listpack-size's 8 KB: a plain quicklist node
        byte[] binary = [0, 1, 2, 13, 10, 255];
        byte[] dump = DumpOf(c =>
        {
            RespAssert.Integer(6, c.Call("RPUSH", "list:small", "a", "", "-5", "12", "123456789012", "-70000"));
            RespAssert.Integer(1, c.Call(Bytes.GetBytes("RPUSH"), Bytes.GetBytes("list:binary"), binary));
            for (int i = 0; i < 1000; i++)
                c.Call("RPUSH", "list:big", "e" + i);
            RespAssert.Integer(1001, c.Call("RPUSH", "list:big", bigElement));
            RespAssert.Integer(5, c.Call("SADD", "set:ints", "1", "2", "-3", "70000", "5000000000"));
            for (int i = 0; i < 200; i++)
                c.Call("SADD", "set:strings", "m" + i);
            RespAssert.Integer(4, c.Call("HSET", "hash:small", "f1", "v1", "n", "12", "neg", "-7", "empty", ""));
            RespAssert.Integer(1, c.Call("PEXPIREAT", "hash:small", "4102444800000"));
            for (int i = 0; i < 600; i++)   // over hash-max-listpack-entries (512 in Debian's build)
                c.Call("HSET", "hash:big", "field" + i, "value" + i);
            RespAssert.Integer(6, c.Call("ZADD", "zset:small", "1.5", "a", "-inf", "b", "+inf", "c", "3", "d", "0", "e", "-0.25", "f"));
            for (int i = 0; i < 200; i++)
                c.Call("ZADD", "zset:big", (i * 0.5).ToString(CultureInfo.InvariantCulture), "z" + i);
            // Which encodings this dump exercises: every one Redis 7.0 writes for these types (its
            // lists are always quicklists: of one listpack node when small, with a plain node here when big).
            foreach (var (key, encoding) in new[] { ("list:small", "quicklist"), ("list:big", "quicklist"), ("set:ints", "intset"),
                ("set:strings", "hashtable"), ("hash:small", "listpack"), ("hash:big", "hashtable"), ("zset:small", "listpack"), ("zset:big", "skiplist") })
                Assert.Equal(encoding, c.Call("OBJECT", "ENCODING", key).Text);
        }, "collections");

        var rdb = Parse(dump);
        Assert.Equal(["a", "", "-5", "12", "123456789012", "-70000"], Elements(rdb, "list:small", RdbCollection.List));
        Assert.Equal([Bytes.GetString(binary)], Elements(rdb, "list:binary", RdbCollection.List));
        Assert.Equal([.. Enumerable.Range(0, 1000).Select(i => "e" + i), bigElement], Elements(rdb, "list:big", RdbCollection.List));
        Assert.Equal(["-3", "1", "2", "70000", "5000000000"], Elements(rdb, "set:ints", RdbCollection.Set));   // an intset is sorted
        Assert.Equal(Enumerable.Range(0, 200).Select(i => "m" + i).Order(), Elements(rdb, "set:strings", RdbCollection.Set).Order());
        Assert.Equal(["f1=v1", "n=12", "neg=-7", "empty="], Elements(rdb, "hash:small", RdbCollection.Hash));
        Assert.Equal(4102444800000, rdb.Collection(0, "hash:small").ExpireAt);
        Assert.Equal(0, rdb.Collection(0, "hash:big").ExpireAt);
        Assert.Equal(Enumerable.Range(0, 600).Select(i => $"field{i}=value{i}").Order(), Elements(rdb, "hash:big", RdbCollection.Hash).Order());
        Assert.Equal(["b@-Infinity", "f@-0.25", "e@0", "a@1.5", "d@3", "c@Infinity"], Elements(rdb, "zset:small", RdbCollection.SortedSet));
        Assert.Equal(Enumerable.Range(0, 200).Select(i => "z" + i + "@" + (i * 0.5).ToString("R", CultureInfo.InvariantCulture)).Order(),
            Elements(rdb, "zset:big", RdbCollection.SortedSet).Order());
        Assert.Equal(9, rdb.Collections.Count);
        Assert.Empty(rdb.Strings);
    }

    [Fact]
    public void OlderEncodingsAreRead()
    {
        byte[] hundred = Encoding.ASCII.GetBytes(new string('h', 100));
        byte[] body =
        [
            // LIST (1), the linked list of Redis 2.x, and SET (2) / HASH (4) as plain sequences.
            1, .. Str("plain-list"), 2, .. Str("x"), .. Str("y"),
            2, .. Str("plain-set"), 2, .. Str("s1"), .. Str("s2"),
            4, .. Str("plain-hash"), 1, .. Str("f"), .. Str("v"),
            // ZSET (3): scores as text, 254 and 255 meaning inf and -inf.
            3, .. Str("text-scores"), 3, .. Str("x"), 4, .. "1.25"u8, .. Str("y"), 254, .. Str("z"), 255,
            // LIST_ZIPLIST (10): every ziplist string and integer encoding.
            10, .. Str("ziplist"), .. Blob(Ziplist(
                ZipString("ab"u8), ZipString(hundred), ZipInt(7), ZipInt(-100), ZipInt(1000), ZipInt(-100_000), ZipInt(1 << 30), ZipInt(1L << 40))),
            // HASH_ZIPLIST (13) and ZSET_ZIPLIST (12): pairs; a score as text or as an integer.
            13, .. Str("hash-ziplist"), .. Blob(Ziplist(ZipString("field"u8), ZipString("value"u8), ZipString("n"u8), ZipInt(-3))),
            12, .. Str("zset-ziplist"), .. Blob(Ziplist(ZipString("m"u8), ZipString("2.5"u8), ZipString("n"u8), ZipInt(3))),
            // LIST_QUICKLIST (14): ziplist nodes.
            14, .. Str("quicklist-1"), 2, .. Blob(Ziplist(ZipString("q1"u8), ZipString("q2"u8))), .. Blob(Ziplist(ZipInt(3))),
            // HASH_ZIPMAP (9): [len][field][len][free][value][free bytes], then 0xFF.
            9, .. Str("zipmap"), .. Blob([2, 1, (byte)'a', 1, 0, (byte)'1', 2, (byte)'b', (byte)'b', 2, 1, (byte)'2', (byte)'2', 0xEE, 0xFF]),
            // An expiry applies to a collection as to a string.
            0xFC, .. LittleEndian64(4102444800000), 11, .. Str("intset-16"), .. Blob([2, 0, 0, 0, 2, 0, 0, 0, .. LittleEndian16(-2), .. LittleEndian16(300)]),
        ];
        var rdb = Parse(Craft(9, body));
        Assert.Equal(["x", "y"], Elements(rdb, "plain-list", RdbCollection.List));
        Assert.Equal(["s1", "s2"], Elements(rdb, "plain-set", RdbCollection.Set));
        Assert.Equal(["f=v"], Elements(rdb, "plain-hash", RdbCollection.Hash));
        Assert.Equal(["x@1.25", "y@Infinity", "z@-Infinity"], Elements(rdb, "text-scores", RdbCollection.SortedSet));
        Assert.Equal(["ab", new string('h', 100), "7", "-100", "1000", "-100000", (1 << 30).ToString(), (1L << 40).ToString()],
            Elements(rdb, "ziplist", RdbCollection.List));
        Assert.Equal(["field=value", "n=-3"], Elements(rdb, "hash-ziplist", RdbCollection.Hash));
        Assert.Equal(["m@2.5", "n@3"], Elements(rdb, "zset-ziplist", RdbCollection.SortedSet));
        Assert.Equal(["q1", "q2", "3"], Elements(rdb, "quicklist-1", RdbCollection.List));
        Assert.Equal(["a=1", "bb=22"], Elements(rdb, "zipmap", RdbCollection.Hash));
        Assert.Equal(["-2", "300"], Elements(rdb, "intset-16", RdbCollection.Set));
        Assert.Equal(4102444800000, rdb.Collection(0, "intset-16").ExpireAt);
        Assert.Equal(0, rdb.Collection(0, "zipmap").ExpireAt);
    }

    [Theory]
    [InlineData("total bytes", "the listpack header says 99 bytes")]
    [InlineData("count", "the listpack header says 3 elements, it holds 2")]
    [InlineData("overrun", "runs past the end of the blob")]
    [InlineData("encoding", "unknown listpack entry encoding 0xF5")]
    [InlineData("odd", "an odd number of elements")]
    public void CorruptListpackIsRefusedWithItsKey(string damage, string expected)
    {
        byte[] listpack = damage switch
        {
            "total bytes" => [99, 0, 0, 0, 2, 0, 0x81, (byte)'a', 2, 0x81, (byte)'b', 2, 0xFF],
            "count" => [13, 0, 0, 0, 3, 0, 0x81, (byte)'a', 2, 0x81, (byte)'b', 2, 0xFF],
            "overrun" => [11, 0, 0, 0, 2, 0, 0x81, (byte)'a', 2, 0x85, 0xFF],
            "encoding" => [10, 0, 0, 0, 1, 0, 0xF5, 0, 1, 0xFF],
            _ => [10, 0, 0, 0, 1, 0, 0x81, (byte)'a', 2, 0xFF],
        };
        byte[] rdb = Craft(10, [16, .. Str("broken"), .. Blob(listpack)]);
        var error = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new MemoryStream(rdb), new RecordingVisitor()));
        Assert.Contains("corrupt listpack while reading the hash listpack value of key 'broken'", error.Message);
        Assert.Contains(expected, error.Message);
        Assert.Equal(9 + 1 + 7, error.Offset);   // the blob's own offset: header, type, key
    }

    [Fact]
    public void NanScoreIsRefused()
    {
        byte[] rdb = Craft(10, [3, .. Str("z"), 1, .. Str("m"), 253]);
        var error = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new MemoryStream(rdb), new RecordingVisitor()));
        Assert.Contains("a NaN score while reading the sorted set value of key 'z'", error.Message);
    }

    /// <summary>
    /// A base file crafted by hand and named in a manifest loads into the server: collections in
    /// old encodings, an expiry, a member given twice (the later wins) and an empty hash, which
    /// Redis skips when loading and so does this server.
    /// </summary>
    [Fact]
    public void CraftedBaseFileLoadsIntoTheServer()
    {
        byte[] body =
        [
            0xFE, 0, 0xFB, 4, 1,
            10, .. Str("list"), .. Blob(Ziplist(ZipString("a"u8), ZipInt(-1), ZipString("c"u8))),
            0xFC, .. LittleEndian64(4102444800000), 13, .. Str("hash"), .. Blob(Ziplist(ZipString("f"u8), ZipString("old"u8), ZipString("f"u8), ZipString("new"u8))),
            16, .. Str("empty"), .. Blob([7, 0, 0, 0, 0, 0, 0xFF]),
            5, .. Str("zset"), 2, .. Str("m"), .. LittleEndian64(BitConverter.DoubleToInt64Bits(2.5)), .. Str("n"), .. LittleEndian64(BitConverter.DoubleToInt64Bits(double.NegativeInfinity)),
        ];
        using var dir = new TempDirectory();
        Directory.CreateDirectory(dir.AppendDirectory);
        File.WriteAllBytes(Path.Combine(dir.AppendDirectory, "appendonly.aof.1.base.rdb"), Craft(10, body));
        File.WriteAllText(Path.Combine(dir.AppendDirectory, "appendonly.aof.1.incr.aof"), "");
        File.WriteAllText(Path.Combine(dir.AppendDirectory, "appendonly.aof.manifest"),
            "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n");

        using var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path);
        using var c = server.Connect();
        Assert.Equal(["a", "-1", "c"], c.Call("LRANGE", "list", "0", "-1").Array!.Select(r => r.Text));
        Assert.Equal(["f", "new"], c.Call("HGETALL", "hash").Array!.Select(r => r.Text));
        Assert.Equal(4102444800000, c.Call("PEXPIRETIME", "hash").Integer);
        Assert.Equal(-1, c.Call("PEXPIRETIME", "list").Integer);
        RespAssert.Integer(0, c.Call("EXISTS", "empty"));
        Assert.Equal(["n", "-inf", "m", "2.5"], c.Call("ZRANGE", "zset", "0", "-1", "WITHSCORES").Array!.Select(r => r.Text));
        // Loaded into the forms Redis 7.0 chooses: a small ziplist hash becomes a listpack.
        Assert.Equal("quicklist", c.Call("OBJECT", "ENCODING", "list").Text);
        Assert.Equal("listpack", c.Call("OBJECT", "ENCODING", "hash").Text);
        RespAssert.Integer(3, c.Call("DBSIZE"));
        // MEMORY USAGE and the tracked total account for what the load built.
        Assert.True(c.Call("MEMORY", "USAGE", "hash").Integer > 0);
    }

    private static List<string> Elements(RecordingVisitor rdb, string key, RdbCollection kind)
    {
        var entry = rdb.Collection(0, key);
        Assert.Equal(kind, entry.Kind);
        return entry.Elements;
    }

    /// <summary>An RDB string of up to 16383 bytes: its 6- or 14-bit length, then the bytes.</summary>
    private static byte[] Blob(byte[] bytes)
        => bytes.Length < 64 ? [(byte)bytes.Length, .. bytes] : [(byte)(0x40 | bytes.Length >> 8), (byte)bytes.Length, .. bytes];

    private static byte[] Str(string text) => Blob(Encoding.ASCII.GetBytes(text));

    /// <summary>A ziplist of the given encoded entries (each [encoding][data]; previous-length bytes are added here).</summary>
    private static byte[] Ziplist(params byte[][] entries)
    {
        var body = new List<byte>();
        int previous = 0;
        foreach (var entry in entries)
        {
            byte[] prevlen = previous < 254 ? [(byte)previous] : [254, .. LittleEndian32(previous)];
            body.AddRange(prevlen);
            body.AddRange(entry);
            previous = prevlen.Length + entry.Length;
        }
        int total = 10 + body.Count + 1;
        return [.. LittleEndian32(total), .. LittleEndian32(10 + body.Count - previous), .. LittleEndian16((short)entries.Length), .. body, 0xFF];
    }

    private static byte[] ZipString(ReadOnlySpan<byte> text)
        => text.Length < 64 ? [(byte)text.Length, .. text] : [(byte)(0x40 | text.Length >> 8), (byte)text.Length, .. text];

    /// <summary>A ziplist integer in the smallest encoding Redis would pick.</summary>
    private static byte[] ZipInt(long value) => value switch
    {
        >= 0 and <= 12 => [(byte)(0xF1 + value)],
        >= sbyte.MinValue and <= sbyte.MaxValue => [0xFE, (byte)(sbyte)value],
        >= short.MinValue and <= short.MaxValue => [0xC0, .. LittleEndian16((short)value)],
        >= -(1 << 23) and < 1 << 23 => [0xF0, (byte)value, (byte)(value >> 8), (byte)(value >> 16)],
        >= int.MinValue and <= int.MaxValue => [0xD0, .. LittleEndian32((int)value)],
        _ => [0xE0, .. LittleEndian64(value)],
    };
}
