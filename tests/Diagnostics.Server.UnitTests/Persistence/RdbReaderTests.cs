using System.Buffers.Binary;
using System.Text;
using Diagnostics.Server.DataTypes.Streams;
using Diagnostics.Server.Persistence;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// RdbReader against RDB files written by Debian's real redis-server 7 (SAVE dumps and the base
/// file of a multi-part AOF), read whole, in 1-byte reads and in random chunks; plus corrupt,
/// truncated and unsupported inputs, and hand-built files for what Redis 7.0 does not write
/// (other versions, seconds expiry, 64-bit lengths, module data).
/// </summary>
public sealed partial class RdbReaderTests
{
    private static readonly Encoding Bytes = Encoding.Latin1;   // one char per byte: binary keys survive as strings

    [Fact]
    public void SmallEmptyAndBinaryStringsRoundTrip()
    {
        byte[] binary = new byte[256];
        for (int i = 0; i < binary.Length; i++)
            binary[i] = (byte)i;
        byte[] dump = DumpOf(c =>
        {
            RespAssert.Ok(c.Call("SET", "small", "hello"));
            RespAssert.Ok(c.Call("SET", "empty", ""));
            RespAssert.Ok(c.Call(Bytes.GetBytes("SET"), Bytes.GetBytes("binary"), binary));
            RespAssert.Ok(c.Call(Bytes.GetBytes("SET"), Bytes.GetBytes("key\r\n\0\xff"), Bytes.GetBytes("crlf\r\nvalue")));
            RespAssert.Ok(c.Call("SET", "fourteen-bit", new string('x', 300)));
        }, "SET");

        var rdb = Parse(dump);
        Assert.Equal("hello", rdb.Value(0, "small"));
        Assert.Equal("", rdb.Value(0, "empty"));
        Assert.Equal(binary, Bytes.GetBytes(rdb.Value(0, "binary")));
        Assert.Equal("crlf\r\nvalue", rdb.Value(0, "key\r\n\0\xff"));
        Assert.Equal(new string('x', 300), rdb.Value(0, "fourteen-bit"));
        Assert.Equal(5, rdb.Strings.Count);
        Assert.All(rdb.Strings.Values, s => Assert.Equal(0, s.ExpireAt));
        Assert.StartsWith("7.", rdb.AuxFields["redis-ver"]);
        Assert.Equal("64", rdb.AuxFields["redis-bits"]);   // stored int-encoded, delivered as text
        Assert.Equal(new[] { "select 0", "resize 5 0" }, rdb.Events);
    }

    [Fact]
    public void IntegerLookingStringsKeepTheirExactText()
    {
        string[] values =
        [
            "0", "-1", "1", "12345", "4294967296", "007", "-0", "+1", " 1", "1 ", "1a",
            "127", "-128", "128", "-129", "32767", "-32768", "32768", "2147483647", "-2147483648", "2147483648",
            "9223372036854775807", "-9223372036854775808", "99999999999999999999",
        ];
        byte[] dump = DumpOf(c =>
        {
            foreach (var v in values)
                RespAssert.Ok(c.Call("SET", "int:" + v, v));
            RespAssert.Ok(c.Call("SET", "12345", "integer-looking key"));
            RespAssert.Ok(c.Call("SET", "-7", "negative key"));
        }, "SET");

        var rdb = Parse(dump);
        foreach (var v in values)
            Assert.Equal(v, rdb.Value(0, "int:" + v));
        Assert.Equal("integer-looking key", rdb.Value(0, "12345"));
        Assert.Equal("negative key", rdb.Value(0, "-7"));
    }

    [Fact]
    public void CompressibleMegabyteValueIsDecompressed()
    {
        var text = new StringBuilder();
        for (int i = 0; text.Length < 1024 * 1024; i++)
            text.Append("line ").Append(i % 1000).Append(" of a very repetitive value\n");
        string value = text.ToString(0, 1024 * 1024);
        byte[] dump = DumpOf(c =>
        {
            RespAssert.Ok(c.Call("SET", "compressible", value));
            RespAssert.Ok(c.Call("SET", "short-compressible", new string('z', 100)));
        }, "SET");

        Assert.True(dump.Length < 512 * 1024, $"redis did not LZF-compress the value: dump is {dump.Length} bytes");
        var rdb = Parse(dump);
        Assert.Equal(value, rdb.Value(0, "compressible"));
        Assert.Equal(new string('z', 100), rdb.Value(0, "short-compressible"));
    }

    [Fact]
    public void RandomFiveMegabyteValueIsReadExactly()
    {
        byte[] value = new byte[5 * 1024 * 1024];
        new Random(20240607).NextBytes(value);
        byte[] dump = DumpOf(c => RespAssert.Ok(c.Call(Bytes.GetBytes("SET"), Bytes.GetBytes("random"), value)), "SET");

        Assert.True(dump.Length > value.Length);
        var rdb = Parse(dump);
        Assert.Equal(value, Bytes.GetBytes(rdb.Value(0, "random")));
    }

    [Fact]
    public void ExpiryIsDeliveredAsAbsoluteMilliseconds()
    {
        long before = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        byte[] dump = DumpOf(c =>
        {
            RespAssert.Ok(c.Call("SET", "pexpireat", "v1"));
            RespAssert.Integer(1, c.Call("PEXPIREAT", "pexpireat", "4102444800123"));
            RespAssert.Ok(c.Call("SET", "expireat", "v2"));
            RespAssert.Integer(1, c.Call("EXPIREAT", "expireat", "4102444801"));
            RespAssert.Ok(c.Call("SET", "px", "v3", "PX", "100000"));
            RespAssert.Ok(c.Call("SET", "persistent", "v4"));
        }, "SET");

        var rdb = Parse(dump);
        Assert.Equal(4102444800123, rdb.Strings[(0, "pexpireat")].ExpireAt);
        Assert.Equal(4102444801000, rdb.Strings[(0, "expireat")].ExpireAt);
        Assert.InRange(rdb.Strings[(0, "px")].ExpireAt, before + 100_000, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() + 100_000);
        Assert.Equal(0, rdb.Strings[(0, "persistent")].ExpireAt);
        Assert.Equal("v3", rdb.Value(0, "px"));
        Assert.Equal(new[] { "select 0", "resize 4 3" }, rdb.Events);
    }

    [Fact]
    public void KeysLandInTheirDatabases()
    {
        byte[] dump = DumpOf(c =>
        {
            RespAssert.Ok(c.Call("SET", "in-zero", "0"));
            RespAssert.Ok(c.Call("SELECT", "3"));
            RespAssert.Ok(c.Call("SET", "in-three", "3"));
            RespAssert.Ok(c.Call("SET", "also-in-three", "33", "PX", "1000000"));
            RespAssert.Ok(c.Call("SELECT", "15"));
            RespAssert.Ok(c.Call("SET", "in-fifteen", "15"));
            RespAssert.Ok(c.Call("SET", "in-zero", "not zero"));
        }, "SET");

        var rdb = Parse(dump);
        Assert.Equal("0", rdb.Value(0, "in-zero"));
        Assert.Equal("3", rdb.Value(3, "in-three"));
        Assert.Equal("33", rdb.Value(3, "also-in-three"));
        Assert.Equal("15", rdb.Value(15, "in-fifteen"));
        Assert.Equal("not zero", rdb.Value(15, "in-zero"));
        Assert.Equal(5, rdb.Strings.Count);
        Assert.Equal(new[] { "select 0", "resize 1 0", "select 3", "resize 2 1", "select 15", "resize 2 0" }, rdb.Events);
    }

    [Fact]
    public void EmptyDatasetHasOnlyAuxFields()
    {
        byte[] dump = DumpOf(_ => { }, "none");

        var rdb = Parse(dump);
        Assert.Empty(rdb.Strings);
        Assert.Empty(rdb.Events);
        Assert.Contains("redis-ver", rdb.AuxFields.Keys);
        Assert.Equal("0", rdb.AuxFields["aof-base"]);
    }

    [Fact]
    public void RedisSevenAofBaseFileIsReadable()
    {
        using var redis = RealRedisServer.Start("--appendonly", "yes");
        using (var c = redis.Connect())
        {
            RespAssert.Ok(c.Call("SET", "aof:plain", "value"));
            RespAssert.Ok(c.Call("SET", "aof:number", "4294967296"));
            RespAssert.Ok(c.Call("SET", "aof:expiring", "soon", "PXAT", "4102444800999"));
            RespAssert.Ok(c.Call("SELECT", "2"));
            RespAssert.Ok(c.Call("SET", "aof:db2", "two"));
            var started = c.Call("BGREWRITEAOF");
            Assert.False(started.IsError, $"BGREWRITEAOF failed: {started}");
            Poll.Until(() =>
            {
                string info = c.Call("INFO", "persistence").Text!;
                return info.Contains("aof_rewrite_in_progress:0", StringComparison.Ordinal)
                    && info.Contains("aof_rewrite_scheduled:0", StringComparison.Ordinal)
                    && info.Contains("aof_last_bgrewrite_status:ok", StringComparison.Ordinal)
                    && BaseFileOf(redis.Directory) is { } name && !name.EndsWith(".1.base.rdb", StringComparison.Ordinal);
            }, "the AOF rewrite finished", 30_000);
        }

        string basePath = Path.Combine(redis.Directory, "appendonlydir", BaseFileOf(redis.Directory)!);
        var rdb = Parse(File.ReadAllBytes(basePath));
        Assert.Equal("1", rdb.AuxFields["aof-base"]);
        Assert.Equal("value", rdb.Value(0, "aof:plain"));
        Assert.Equal("4294967296", rdb.Value(0, "aof:number"));
        Assert.Equal(4102444800999, rdb.Strings[(0, "aof:expiring")].ExpireAt);
        Assert.Equal("two", rdb.Value(2, "aof:db2"));
        Assert.Equal(4, rdb.Strings.Count);

        // The reader also stops right where the RDB ends when it is read from the base file itself.
        using var file = new FileStream(basePath, FileMode.Open, FileAccess.Read);
        long consumed = RdbReader.Read(file, new RecordingVisitor());
        Assert.Equal(file.Length, consumed);
        Assert.Equal(file.Length, file.Position);
    }

    /// <summary>The base file named in the AOF manifest ("file appendonly.aof.2.base.rdb seq 2 type b").</summary>
    private static string? BaseFileOf(string directory)
    {
        string manifest = Path.Combine(directory, "appendonlydir", "appendonly.aof.manifest");
        if (!File.Exists(manifest))
            return null;
        foreach (var line in File.ReadAllLines(manifest))
        {
            var fields = line.Split(' ');
            if (fields.Length >= 6 && fields[0] == "file" && fields[^1] == "b")
                return fields[1];
        }
        return null;
    }

    [Fact]
    public void PreambleStopsWhereTheAofCommandsStart()
    {
        byte[] rdbBytes = DumpOf(c => RespAssert.Ok(c.Call("SET", "preamble:key", "preamble value")), "SET");
        byte[] commands = RespClient.Encode("SET", "after", "the preamble");
        byte[] junk = Encoding.ASCII.GetBytes("prefix");
        string path = Path.Combine(Path.GetTempPath(), $"rdb-preamble-{Guid.NewGuid():N}.aof");
        try
        {
            File.WriteAllBytes(path, [.. junk, .. rdbBytes, .. commands]);
            using var file = new FileStream(path, FileMode.Open, FileAccess.Read);
            file.Position = junk.Length;
            var visitor = new RecordingVisitor();
            long consumed = RdbReader.Read(file, visitor);
            Assert.Equal(rdbBytes.Length, consumed);
            Assert.Equal(junk.Length + rdbBytes.Length, file.Position);
            byte[] rest = new byte[commands.Length + 1];
            Assert.Equal(commands.Length, file.ReadAtLeast(rest, rest.Length, throwOnEndOfStream: false));
            Assert.Equal(commands, rest[..commands.Length]);
            Assert.Equal("preamble value", visitor.Value(0, "preamble:key"));
        }
        finally
        {
            File.Delete(path);
        }

        // A stream that cannot seek back is not read past the RDB at all.
        using var pipe = new TrickleStream([.. rdbBytes, .. commands], maxChunk: 7, seekable: false);
        Assert.Equal(rdbBytes.Length, RdbReader.Read(pipe, new RecordingVisitor()));
        byte[] tail = new byte[commands.Length + 1];
        Assert.Equal(commands.Length, pipe.ReadAtLeast(tail, tail.Length, throwOnEndOfStream: false));
        Assert.Equal(commands, tail[..commands.Length]);
    }

    [Fact]
    public void FunctionLibrariesAreSkippedAndKeysStillLoad()
    {
        byte[] dump = DumpOf(c =>
        {
            var loaded = c.Call("FUNCTION", "LOAD", "#!lua name=rdbtestlib\nredis.register_function('rdbtestfn', function() return 1 end)");
            RespAssert.Bulk("rdbtestlib", loaded);
            RespAssert.Ok(c.Call("SET", "after-function", "still here"));
        }, "SET");

        Assert.Contains((byte)0xF5, dump);
        var rdb = Parse(dump);
        Assert.Equal("still here", rdb.Value(0, "after-function"));
    }

    [Fact]
    public void StreamsAreReadWithTheirNodesCountersGroupsAndPendingEntries()
    {
        byte[] dump = DumpOf(c =>
        {
            for (int i = 1; i <= 150; i++)   // two nodes (100 entries each at most)
                Assert.False(c.Call("XADD", "s", $"{i}-0", "f", "v" + i).IsError);
            RespAssert.Integer(1, c.Call("XDEL", "s", "3-0"));
            RespAssert.Ok(c.Call("XGROUP", "CREATE", "s", "g", "0"));
            Assert.False(c.Call("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">").IsError);
            RespAssert.Integer(1, c.Call("XGROUP", "CREATECONSUMER", "s", "g", "bob"));
        }, "XADD");

        var events = Parse(dump).Streams[(0, "s")];
        Assert.Equal("expire 0", events[0]);
        Assert.StartsWith("node 1-0 ", events[1]);
        Assert.StartsWith("node 101-0 ", events[2]);
        Assert.Equal("counters 149 150-0 1-0 3-0 150", events[3]);
        // The tombstone at 3-0 lies ahead of the group: Redis cannot count its reads (-1).
        Assert.Equal(["group g 2-0 -1", "pending 1-0 1", "pending 2-0 1", "consumer alice", "owns 1-0", "owns 2-0", "consumer bob"], events[4..]);
    }

    [Fact]
    public void CorruptStreamNodeIsRefusedBeforeItIsKept()
    {
        byte[] dump = DumpOf(c => Assert.False(c.Call("XADD", "s", "5-0", "field", "value").IsError), "XADD");
        // The node's live counter (the listpack's first element, 1) says 3: the entries do not add up.
        int node = Bytes.GetString(dump).IndexOf("field", StringComparison.Ordinal);
        // Back over the master entry: "field"'s header, then the field count, the deleted count and
        // the live count, each a 1-byte integer and its 1-byte back-length.
        int counter = node - 7;
        Assert.Equal([1, 1, 0, 1, 1, 1, 0x85], dump[counter..node]);
        dump[counter] = 3;
        // The checksum would catch the flip first: Redis writes 0 to say "no checksum", as rdbchecksum no does.
        Array.Clear(dump, dump.Length - 8, 8);

        var error = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new MemoryStream(dump), new RecordingVisitor()));
        Assert.Contains("corrupt stream node 5-0", error.Message);
        Assert.Contains("says 3 live and 0 deleted entries but holds 1 and 0", error.Message);

        // A back-length that lies (XREVRANGE walks by them) is refused too.
        dump[counter] = 1;
        dump[counter + 1] = 5;
        error = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new MemoryStream(dump), new RecordingVisitor()));
        Assert.Contains("the back-length at byte 7 says 5, the entry has 1 bytes", error.Message);
    }

    [Fact]
    public void FlippedByteInTheMiddleIsAChecksumMismatch()
    {
        string marker = "checksum-target-0123";   // 20 bytes: Redis compresses only longer strings
        byte[] dump = DumpOf(c => RespAssert.Ok(c.Call("SET", "target", marker)), "SET");
        int at = Bytes.GetString(dump).IndexOf(marker, StringComparison.Ordinal);
        Assert.True(at > 0);
        dump[at + 10] ^= 0x01;

        var error = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new MemoryStream(dump), new RecordingVisitor()));
        Assert.Contains("checksum mismatch", error.Message);
        Assert.Equal(dump.Length - 8, error.Offset);
        Assert.Contains($"offset {dump.Length - 8}", error.Message);
    }

    [Fact]
    public void EverySingleByteCorruptionIsDetected()
    {
        byte[] dump = SmallVariedDump();
        for (int i = 0; i < dump.Length; i++)
        {
            byte[] corrupt = (byte[])dump.Clone();
            corrupt[i] ^= 0xFF;
            var error = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new MemoryStream(corrupt), new RecordingVisitor()));
            Assert.Contains($"offset {error.Offset}", error.Message);
        }
    }

    [Fact]
    public void EveryTruncationIsDetectedWithItsOffset()
    {
        byte[] dump = SmallVariedDump();
        for (int cut = 0; cut < dump.Length; cut++)
        {
            byte[] truncated = dump[..cut];
            var seekable = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new MemoryStream(truncated), new RecordingVisitor()));
            Assert.Contains("truncated", seekable.Message);
            Assert.InRange(seekable.Offset, 0, cut);
            Assert.Contains($"offset {seekable.Offset}", seekable.Message);

            // Read byte by byte, the reader meets the end exactly where the data stops.
            var trickled = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new TrickleStream(truncated, 1, seekable: false), new RecordingVisitor()));
            Assert.Contains("truncated", trickled.Message);
            Assert.Equal(cut, trickled.Offset);
            Assert.Contains($"offset {cut}", trickled.Message);
        }

        var inChecksum = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new MemoryStream(dump[..^3]), new RecordingVisitor()));
        Assert.Contains("while reading the checksum", inChecksum.Message);
        Assert.Contains($"offset {dump.Length - 3}", inChecksum.Message);
    }

    [Fact]
    public void BadMagicIsRefusedAtOffsetZero()
    {
        byte[] dump = SmallVariedDump();
        dump[4] = (byte)'X';
        var error = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new MemoryStream(dump), new RecordingVisitor()));
        Assert.Contains("bad magic", error.Message);
        Assert.Contains("REDIX", error.Message);
        Assert.Equal(0, error.Offset);
        Assert.Contains("offset 0", error.Message);
    }

    [Fact]
    public void VersionsOneToTwelveAreAcceptedAndOthersRefused()
    {
        byte[] body = [0xFE, 0x00, 0x00, 0x01, (byte)'k', 0x01, (byte)'v'];
        foreach (int version in (int[])[1, 3, 4, 5, 9, 10, 11, 12])
        {
            byte[] rdb = Craft(version, body);
            var visitor = new RecordingVisitor();
            Assert.Equal(rdb.Length, RdbReader.Read(new MemoryStream(rdb), visitor));
            Assert.Equal("v", visitor.Value(0, "k"));
            // Before version 5 there is no checksum: the RDB ends at the EOF opcode.
            Assert.Equal(version >= 5 ? 9 + body.Length + 1 + 8 : 9 + body.Length + 1, rdb.Length);
        }

        foreach (string header in (string[])["REDIS0013", "REDIS0000", "REDIS9999"])
        {
            byte[] rdb = [.. Encoding.ASCII.GetBytes(header), 0xFF, 0, 0, 0, 0, 0, 0, 0, 0];
            var error = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new MemoryStream(rdb), new RecordingVisitor()));
            Assert.Contains($"unsupported RDB version {int.Parse(header[5..])}", error.Message);
            Assert.Contains("offset 5", error.Message);
        }

        var letters = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new MemoryStream(Encoding.ASCII.GetBytes("REDIS00a1\xff")), new RecordingVisitor()));
        Assert.Contains("bad version field", letters.Message);
    }

    [Fact]
    public void ZeroChecksumMeansChecksumsWereDisabled()
    {
        byte[] rdb = Craft(10, [0x00, 0x01, (byte)'k', 0x01, (byte)'v'], zeroChecksum: true);
        var visitor = new RecordingVisitor();
        Assert.Equal(rdb.Length, RdbReader.Read(new MemoryStream(rdb), visitor));
        Assert.Equal("v", visitor.Value(0, "k"));
    }

    [Fact]
    public void SecondsExpiryAndHintOpcodesAreHandled()
    {
        byte[] body =
        [
            0xFE, 0x05, 0xF4, 0x40, 0x05, 0x03, 0x01,   // SLOT_INFO (7.4 cluster mode): slot 5 holds 3 keys, 1 expiring
            0xFD, .. LittleEndian32(2_000_000_000), 0xF8, 0x40, 0x10, 0xF9, 0x07, 0x00, 0x01, (byte)'a', 0x01, (byte)'1',
            0xF9, 0x03, 0xFC, .. LittleEndian64(1_234_567), 0x00, 0x01, (byte)'b', 0x01, (byte)'2',
            0x00, 0x01, (byte)'c', 0x01, (byte)'3',
        ];
        var visitor = Parse(Craft(12, body));
        Assert.Equal(2_000_000_000_000, visitor.Strings[(5, "a")].ExpireAt);
        Assert.Equal(1_234_567, visitor.Strings[(5, "b")].ExpireAt);
        Assert.Equal(0, visitor.Strings[(5, "c")].ExpireAt);   // an expiry belongs to the next key only
        Assert.Equal(new[] { "select 5" }, visitor.Events);
    }

    [Fact]
    public void AllLengthEncodingsAreRead()
    {
        byte[] body =
        [
            0xFB, 0x81, .. BigEndian64(3), 0x80, .. BigEndian32(0),
            0x00, 0x81, .. BigEndian64(2), (byte)'k', (byte)'8', 0x80, .. BigEndian32(3), (byte)'v', (byte)'a', (byte)'l',
            0x00, 0x41, 0x00, .. Encoding.ASCII.GetBytes(new string('a', 256)), 0x00,
            0x00, 0xC0, 0x9C, 0xC1, .. LittleEndian16(-300),
            0x00, 0xC2, .. LittleEndian32(-70000), 0xC0, 0x7F,
        ];
        var visitor = Parse(Craft(10, body));
        Assert.Equal("val", visitor.Value(0, "k8"));
        Assert.Equal("", visitor.Value(0, new string('a', 256)));
        Assert.Equal("-300", visitor.Value(0, "-100"));
        Assert.Equal("127", visitor.Value(0, "-70000"));
        Assert.Equal(new[] { "resize 3 0" }, visitor.Events);
    }

    [Fact]
    public void ModuleAuxDataIsRefusedNamingTheModule()
    {
        ulong id = ModuleId("rdbtest-1", encodingVersion: 3);
        byte[] body = [0xF7, 0x81, .. BigEndian64(id), 0x02, 0x02, 0x05, 0x01, (byte)'x', 0x00];
        byte[] rdb = Craft(10, body);
        var error = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new MemoryStream(rdb), new RecordingVisitor()));
        Assert.Contains("module auxiliary data", error.Message);
        Assert.Contains("'rdbtest-1'", error.Message);
        Assert.Contains("offset 9", error.Message);
    }

    [Fact]
    public void PreReleaseFunctionsAndUnknownOpcodesAreRefused()
    {
        var function = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new MemoryStream(Craft(10, [0xF6, 0x01, (byte)'x'])), new RecordingVisitor()));
        Assert.Contains("0xF6", function.Message);
        Assert.Contains("offset 9", function.Message);

        var unknown = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new MemoryStream(Craft(10, [0xFE, 0x00, 0xF0])), new RecordingVisitor()));
        Assert.Contains("unknown opcode or value type 240 (0xF0)", unknown.Message);
        Assert.Contains("offset 11", unknown.Message);

        var badLength = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new MemoryStream(Craft(10, [0x00, 0x82, 0, 0, 0, 1])), new RecordingVisitor()));
        Assert.Contains("invalid length encoding 0x82", badLength.Message);
        Assert.Contains("offset 10", badLength.Message);

        var badEncoding = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new MemoryStream(Craft(10, [0x00, 0x01, (byte)'k', 0xC5])), new RecordingVisitor()));
        Assert.Contains("unknown string encoding 5", badEncoding.Message);
        Assert.Contains("offset 12", badEncoding.Message);
    }

    [Fact]
    public void CorruptLzfDataIsRefused()
    {
        // A back reference (0x20) before any output byte exists.
        byte[] body = [0x00, 0x01, (byte)'k', 0xC3, 0x02, 0x05, 0x20, 0x00];
        var error = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new MemoryStream(Craft(10, body)), new RecordingVisitor()));
        Assert.Contains("corrupt LZF", error.Message);
        Assert.Contains("offset 12", error.Message);

        // A stated size no LZF input of that length could produce is refused before allocating it.
        byte[] huge = [0x00, 0x01, (byte)'k', 0xC3, 0x02, 0x80, .. BigEndian32(2_000_000_000), 0x00, (byte)'a'];
        var impossible = Assert.Throws<RdbFormatException>(() => RdbReader.Read(new MemoryStream(Craft(10, huge)), new RecordingVisitor()));
        Assert.Contains("cannot hold 2000000000 bytes", impossible.Message);
    }

    [Fact]
    public void LzfDecompressesLiteralsAndOverlappingReferences()
    {
        // Literal "ab", then a back reference of distance 2 and length 9 (7 + 0 extra + 2), overlapping itself.
        byte[] compressed = [0x01, (byte)'a', (byte)'b', 0xE0, 0x00, 0x01];
        byte[] output = new byte[11];
        Assert.Equal(11, Lzf.Decompress(compressed, output));
        Assert.Equal("ababababab" + "a", Encoding.ASCII.GetString(output));
        Assert.Equal(-1, Lzf.Decompress(compressed, new byte[10]));
        Assert.Equal(-1, Lzf.Decompress([0x05, (byte)'a'], new byte[10]));
    }

    [Fact]
    public void Crc64MatchesRedisCheckValue()
    {
        // Redis's crc64.c self-test: crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9ca.
        Assert.Equal(0xe9c6d914c4b8d9caUL, Crc64.Compute("123456789"u8));
        byte[] data = new byte[1000];
        new Random(5).NextBytes(data);
        ulong whole = Crc64.Compute(data);
        ulong pieces = Crc64.Update(Crc64.Update(Crc64.Update(0, data.AsSpan(0, 3)), data.AsSpan(3, 500)), data.AsSpan(503));
        Assert.Equal(whole, pieces);
    }

    [Fact]
    public void HalfGigabyteStringIsRead()
    {
        // Redis's largest string (512 MB), streamed in without the test ever holding a copy.
        const int length = 512 * 1024 * 1024;
        var visitor = new GeneratedValueVisitor();
        using var stream = new GeneratedRdbStream(length);
        Assert.Equal(stream.TotalLength, RdbReader.Read(stream, visitor));
        Assert.Equal(length, visitor.Length);
        Assert.True(visitor.MatchesPattern, "the 512 MB value differs from what was generated");
    }

    // ---------------------------------------------------------------- helpers

    /// <summary>Runs a real redis-server, lets <paramref name="fill"/> write, SAVEs and returns dump.rdb.</summary>
    private static byte[] DumpOf(Action<RespClient> fill, string what)
    {
        using var redis = RealRedisServer.Start();
        using (var c = redis.Connect())
        {
            fill(c);
            var saved = c.Call("SAVE");
            Assert.True(saved.Kind == '+' && saved.Text == "OK", $"SAVE after {what} failed: {saved}\n{redis.Output}");
        }
        return File.ReadAllBytes(Path.Combine(redis.Directory, "dump.rdb"));
    }

    /// <summary>A small real dump with expiry, several databases, integer and LZF encodings.</summary>
    private static byte[] SmallVariedDump() => DumpOf(c =>
    {
        RespAssert.Ok(c.Call("SET", "a", "1"));
        RespAssert.Ok(c.Call("SET", "b", "-30000"));
        RespAssert.Ok(c.Call("SET", "c", "hello world", "PXAT", "4102444800000"));
        RespAssert.Ok(c.Call("SET", "d", new string('r', 80)));
        RespAssert.Ok(c.Call("SELECT", "1"));
        RespAssert.Ok(c.Call("SET", "e", "x"));
    }, "SET");

    /// <summary>Parses whole, 1 byte per Read from a stream that cannot seek, and in random chunks; all must agree.</summary>
    private static RecordingVisitor Parse(byte[] rdb)
    {
        var whole = new RecordingVisitor();
        var memory = new MemoryStream(rdb);
        Assert.Equal(rdb.Length, RdbReader.Read(memory, whole));
        Assert.Equal(rdb.Length, memory.Position);

        var trickled = new RecordingVisitor();
        Assert.Equal(rdb.Length, RdbReader.Read(new TrickleStream(rdb, 1, seekable: false), trickled));
        var chunked = new RecordingVisitor();
        var chunks = new TrickleStream(rdb, 100_000, seekable: true);
        Assert.Equal(rdb.Length, RdbReader.Read(chunks, chunked));
        Assert.Equal(rdb.Length, chunks.Position);

        foreach (var other in (RecordingVisitor[])[trickled, chunked])
        {
            Assert.Equal(whole.Events, other.Events);
            Assert.Equal(whole.AuxFields, other.AuxFields);
            Assert.Equal(whole.Strings.Count, other.Strings.Count);
            foreach (var (key, entry) in whole.Strings)
                Assert.True(other.Strings.TryGetValue(key, out var same) && same == entry, $"key {key} differs between read modes");
            Assert.Equal(whole.Collections.Count, other.Collections.Count);
            foreach (var (key, entry) in whole.Collections)
                Assert.True(other.Collections.TryGetValue(key, out var same) && same.Kind == entry.Kind && same.ExpireAt == entry.ExpireAt
                    && same.Elements.SequenceEqual(entry.Elements), $"collection {key} differs between read modes");
        }
        return whole;
    }

    /// <summary>"REDIS" + version + body + EOF + checksum (from version 5).</summary>
    private static byte[] Craft(int version, byte[] body, bool zeroChecksum = false)
    {
        byte[] content = [.. Encoding.ASCII.GetBytes($"REDIS{version:D4}"), .. body, 0xFF];
        if (version < 5)
            return content;
        return [.. content, .. LittleEndian64(zeroChecksum ? 0 : (long)Crc64.Compute(content))];
    }

    private static ulong ModuleId(string name, int encodingVersion)
    {
        const string charset = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        ulong id = 0;
        foreach (char ch in name)
            id = (id << 6) | (uint)charset.IndexOf(ch);
        return (id << 10) | (uint)encodingVersion;
    }

    private static byte[] LittleEndian16(short v)
    {
        var b = new byte[2];
        BinaryPrimitives.WriteInt16LittleEndian(b, v);
        return b;
    }

    private static byte[] LittleEndian32(int v)
    {
        var b = new byte[4];
        BinaryPrimitives.WriteInt32LittleEndian(b, v);
        return b;
    }

    private static byte[] LittleEndian64(long v)
    {
        var b = new byte[8];
        BinaryPrimitives.WriteInt64LittleEndian(b, v);
        return b;
    }

    private static byte[] BigEndian32(uint v)
    {
        var b = new byte[4];
        BinaryPrimitives.WriteUInt32BigEndian(b, v);
        return b;
    }

    private static byte[] BigEndian64(ulong v)
    {
        var b = new byte[8];
        BinaryPrimitives.WriteUInt64BigEndian(b, v);
        return b;
    }

    private readonly record struct StringEntry(string Value, long ExpireAt);

    /// <summary>Records everything the reader reports; keys and values as Latin-1 so every byte survives.</summary>
    private sealed class RecordingVisitor : IRdbVisitor
    {
        private int _database;
        public List<string> Events { get; } = [];
        public Dictionary<(int Database, string Key), StringEntry> Strings { get; } = [];
        public Dictionary<string, string> AuxFields { get; } = [];

        public string Value(int database, string key)
            => Strings.TryGetValue((database, key), out var entry) ? entry.Value : throw new KeyNotFoundException($"no key '{key}' in db {database}");

        public void SelectDatabase(int index)
        {
            _database = index;
            Events.Add($"select {index}");
        }

        public void ResizeDatabase(long keys, long expires) => Events.Add($"resize {keys} {expires}");

        public void String(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, long expireAtUnixMs)
            => Assert.True(Strings.TryAdd((_database, Bytes.GetString(key)), new StringEntry(Bytes.GetString(value), expireAtUnixMs)), "a key was delivered twice");

        public void Aux(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) => AuxFields[Bytes.GetString(name)] = Bytes.GetString(value);

        /// <summary>Collections as read: elements in delivery order, hash pairs as "field=value", members with scores as "member@score".</summary>
        public Dictionary<(int Database, string Key), CollectionEntry> Collections { get; } = [];
        private CollectionEntry? _open;

        public CollectionEntry Collection(int database, string key)
            => Collections.TryGetValue((database, key), out var entry) ? entry : throw new KeyNotFoundException($"no collection '{key}' in db {database}");

        public void BeginCollection(RdbCollection kind, ReadOnlySpan<byte> key, long expireAtUnixMs, long sizeHint)
        {
            Assert.Null(_open);
            _open = new CollectionEntry(kind, expireAtUnixMs, []);
            Assert.True(Collections.TryAdd((_database, Bytes.GetString(key)), _open), "a key was delivered twice");
        }

        public void ListElement(ReadOnlySpan<byte> element) => Add(RdbCollection.List, Bytes.GetString(element));
        public void SetMember(ReadOnlySpan<byte> member) => Add(RdbCollection.Set, Bytes.GetString(member));
        public void HashField(ReadOnlySpan<byte> field, ReadOnlySpan<byte> value) => Add(RdbCollection.Hash, Bytes.GetString(field) + "=" + Bytes.GetString(value));
        public void SortedSetMember(ReadOnlySpan<byte> member, double score)
            => Add(RdbCollection.SortedSet, Bytes.GetString(member) + "@" + score.ToString("R", System.Globalization.CultureInfo.InvariantCulture));

        public void EndCollection()
        {
            Assert.NotNull(_open);
            _open = null;
        }

        /// <summary>Streams as the events read, one line each (node masters and sizes, counters, groups, pending entries, consumers).</summary>
        public Dictionary<(int Database, string Key), List<string>> Streams { get; } = [];
        private List<string>? _stream;

        public void BeginStream(ReadOnlySpan<byte> key, long expireAtUnixMs)
        {
            Assert.Null(_stream);
            _stream = [$"expire {expireAtUnixMs}"];
            Assert.True(Streams.TryAdd((_database, Bytes.GetString(key)), _stream), "a key was delivered twice");
        }

        public void StreamNode(StreamId master, ReadOnlySpan<byte> listpack) => _stream!.Add($"node {master} {listpack.Length}");
        public void StreamCounters(long length, StreamId lastId, StreamId firstId, StreamId maxDeletedId, long entriesAdded)
            => _stream!.Add($"counters {length} {lastId} {firstId} {maxDeletedId} {entriesAdded}");
        public void StreamGroup(ReadOnlySpan<byte> name, StreamId lastDelivered, long entriesRead) => _stream!.Add($"group {Bytes.GetString(name)} {lastDelivered} {entriesRead}");
        public void StreamGroupPending(StreamId id, long deliveryTimeUnixMs, long deliveryCount) => _stream!.Add($"pending {id} {deliveryCount}");
        public void StreamConsumer(ReadOnlySpan<byte> name, long seenTimeUnixMs) => _stream!.Add($"consumer {Bytes.GetString(name)}");
        public void StreamConsumerPending(StreamId id) => _stream!.Add($"owns {id}");

        public void EndStream()
        {
            Assert.NotNull(_stream);
            _stream = null;
        }

        private void Add(RdbCollection kind, string element)
        {
            Assert.NotNull(_open);
            Assert.Equal(kind, _open.Kind);
            _open.Elements.Add(element);
        }
    }

    private sealed record CollectionEntry(RdbCollection Kind, long ExpireAt, List<string> Elements);

    /// <summary>Checks the one big value against <see cref="GeneratedRdbStream.Pattern"/> without copying it.</summary>
    private sealed class GeneratedValueVisitor : IRdbVisitor
    {
        public long Length { get; private set; }
        public bool MatchesPattern { get; private set; }
        public void SelectDatabase(int index) { }
        public void ResizeDatabase(long keys, long expires) { }
        public void Aux(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) { }
        public void BeginCollection(RdbCollection kind, ReadOnlySpan<byte> key, long expireAtUnixMs, long sizeHint)
            => throw new InvalidOperationException("the generated RDB holds one string");
        public void ListElement(ReadOnlySpan<byte> element) { }
        public void SetMember(ReadOnlySpan<byte> member) { }
        public void HashField(ReadOnlySpan<byte> field, ReadOnlySpan<byte> value) { }
        public void SortedSetMember(ReadOnlySpan<byte> member, double score) { }
        public void EndCollection() { }
        public void BeginStream(ReadOnlySpan<byte> key, long expireAtUnixMs) => throw new InvalidOperationException("the generated RDB holds one string");
        public void StreamNode(StreamId master, ReadOnlySpan<byte> listpack) { }
        public void StreamCounters(long length, StreamId lastId, StreamId firstId, StreamId maxDeletedId, long entriesAdded) { }
        public void StreamGroup(ReadOnlySpan<byte> name, StreamId lastDelivered, long entriesRead) { }
        public void StreamGroupPending(StreamId id, long deliveryTimeUnixMs, long deliveryCount) { }
        public void StreamConsumer(ReadOnlySpan<byte> name, long seenTimeUnixMs) { }
        public void StreamConsumerPending(StreamId id) { }
        public void EndStream() { }

        public void String(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, long expireAtUnixMs)
        {
            Length = value.Length;
            MatchesPattern = key.SequenceEqual("big"u8);
            for (int at = 0; at < value.Length && MatchesPattern; at += GeneratedRdbStream.Pattern.Length)
            {
                var chunk = value[at..Math.Min(value.Length, at + GeneratedRdbStream.Pattern.Length)];
                MatchesPattern = chunk.SequenceEqual(GeneratedRdbStream.Pattern.AsSpan(0, chunk.Length));
            }
        }
    }

    /// <summary>Hands out its bytes in reads of 1 to <c>maxChunk</c> bytes, seekable or not.</summary>
    private sealed class TrickleStream(byte[] data, int maxChunk, bool seekable) : Stream
    {
        private readonly Random _random = new(42);
        private int _position;

        public override bool CanRead => true;
        public override bool CanSeek => seekable;
        public override bool CanWrite => false;
        public override long Length => seekable ? data.Length : throw new NotSupportedException();

        public override long Position
        {
            get => seekable ? _position : throw new NotSupportedException();
            set => _position = seekable ? checked((int)value) : throw new NotSupportedException();
        }

        public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

        public override int Read(Span<byte> buffer)
        {
            int n = Math.Min(Math.Min(buffer.Length, data.Length - _position), maxChunk == 1 ? 1 : _random.Next(1, maxChunk + 1));
            data.AsSpan(_position, n).CopyTo(buffer);
            _position += n;
            return n;
        }

        public override void Flush() { }
        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
        public override void SetLength(long value) => throw new NotSupportedException();
        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }

    /// <summary>
    /// A version 12 RDB holding one string of <c>length</c> generated bytes, produced on the fly with
    /// its CRC-64 computed as it goes (the checksum comes last), so no copy of it is ever held here.
    /// </summary>
    private sealed class GeneratedRdbStream : Stream
    {
        private readonly byte[] _head;
        private readonly long _valueLength;
        private long _position;
        private ulong _crc;
        private byte[]? _tail;

        public GeneratedRdbStream(int valueLength)
        {
            _valueLength = valueLength;
            _head = [.. Encoding.ASCII.GetBytes("REDIS0012"), 0xFE, 0x00, 0x00, 0x03, (byte)'b', (byte)'i', (byte)'g', 0x80, .. BigEndian32((uint)valueLength)];
            TotalLength = _head.Length + valueLength + 1 + 8;
        }

        public long TotalLength { get; }

        /// <summary>The value is this block over and over (an odd length, so block and read boundaries drift apart).</summary>
        public static readonly byte[] Pattern = MakePattern();

        private static byte[] MakePattern()
        {
            var pattern = new byte[65_521];
            new Random(512).NextBytes(pattern);
            return pattern;
        }

        public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

        public override int Read(Span<byte> buffer)
        {
            int n;
            if (_position < _head.Length)
            {
                n = Math.Min(buffer.Length, _head.Length - (int)_position);
                _head.AsSpan((int)_position, n).CopyTo(buffer);
            }
            else if (_position < _head.Length + _valueLength)
            {
                long valueAt = _position - _head.Length;
                int inPattern = (int)(valueAt % Pattern.Length);
                n = (int)Math.Min(Math.Min(buffer.Length, _valueLength - valueAt), Pattern.Length - inPattern);
                Pattern.AsSpan(inPattern, n).CopyTo(buffer);
            }
            else
            {
                if (_tail is null)
                {
                    ulong crc = Crc64.Update(_crc, [0xFF]);
                    _tail = [0xFF, .. LittleEndian64((long)crc)];
                }
                int tailAt = (int)(_position - _head.Length - _valueLength);
                n = Math.Min(buffer.Length, _tail.Length - tailAt);
                _tail.AsSpan(tailAt, n).CopyTo(buffer);
                _position += n;
                return n;
            }
            _crc = Crc64.Update(_crc, buffer[..n]);
            _position += n;
            return n;
        }

        public override bool CanRead => true;
        public override bool CanSeek => false;
        public override bool CanWrite => false;
        public override long Length => throw new NotSupportedException();
        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }
        public override void Flush() { }
        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
        public override void SetLength(long value) => throw new NotSupportedException();
        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }
}
