using System.Globalization;
using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// The geo commands (GEOADD, GEODIST, GEOHASH, GEOPOS, GEOSEARCH, GEOSEARCHSTORE, GEORADIUS,
/// GEORADIUSBYMEMBER and their _RO forms) sent to this server and to the real redis-server side by
/// side in RESP2 and RESP3: every option, the errors in Redis's order of checks, missing keys,
/// WRONGTYPE, STORE/STOREDIST read back, COUNT/ANY/ASC/DESC with ties (in a set Redis keeps as a
/// listpack and in one it keeps as a skip list), positions on the grid's edges, and a few hundred
/// seeded random searches. A line starting with "#" has its scores compared as numbers: this
/// server prints a double's shortest round-trip text where Redis 7.0 prints "%.17g"
/// (0.1 / "0.10000000000000001"), a difference of the shared score formatting, not of geo.
/// "\0" in a line is a NUL byte (Redis compares keywords as C strings).
/// </summary>
public sealed class GeoConformanceTests
{
    public static IEnumerable<object[]> Scripts => Conformance.Keys.Append("random").Select(name => new object[] { name });

    [Theory]
    [MemberData(nameof(Scripts))]
    public void RepliesMatchRedis(string script)
    {
        string[] lines = script == "random" ? RandomScript() : Conformance[script];
        bool[] numeric = [.. lines.Select(line => line.StartsWith('#'))];
        string[][] commands = [.. lines.Select((line, i) => (numeric[i] ? line[1..] : line).Replace("\\0", "\0").Split(' '))];
        SideBySideReplies.AssertSame(commands, c => RespAssert.Ok(c.Call("FLUSHALL")), (i, reply) => numeric[i] ? Numeric(reply) : reply.ToString());
    }

    /// <summary>
    /// The read paths allocate nothing once warm (matches in pooled arrays, replies formatted on the
    /// stack): the server's own per-command accounting (GC.GetAllocatedBytesForCurrentThread around
    /// each call, /api/commands) shows no growth over a few hundred searches of every kind.
    /// </summary>
    [Fact]
    public void ReadPathsDoNotAllocate()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        using var api = new ApiClient(server.HttpPort);
        var random = new Random(3);
        for (int batch = 0; batch < 6; batch++)
        {
            var add = new List<string> { "GEOADD", "g" };
            for (int i = 0; i < 50; i++)
                add.AddRange([Coordinate(random, 5), Coordinate(random, 5), $"m{batch * 50 + i}"]);
            RespAssert.Integer(50, c.Call([.. add]));
        }
        string[][] reads =
        [
            ["GEOSEARCH", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "500", "km", "WITHDIST", "WITHCOORD", "WITHHASH", "ASC"],
            ["GEOSEARCH", "g", "FROMMEMBER", "m1", "BYBOX", "900", "900", "km", "COUNT", "20", "DESC"],
            ["GEOSEARCH", "g", "FROMMEMBER", "m1", "BYBOX", "900", "900", "km", "COUNT", "20", "ANY"],
            ["GEORADIUS_RO", "g", "0", "0", "2000", "km", "WITHDIST"],
            ["GEORADIUSBYMEMBER_RO", "g", "m3", "2000", "km", "WITHCOORD", "COUNT", "100"],
            ["GEORADIUS", "g", "0", "0", "2000", "km", "WITHDIST", "DESC"],
            ["GEODIST", "g", "m1", "m2", "km"], ["GEOHASH", "g", "m1", "m2", "nope"], ["GEOPOS", "g", "m1", "m2", "nope"],
        ];
        foreach (int protocol in (int[])[2, 3])
        {
            if (protocol == 3)
                Assert.Equal('%', c.Call("HELLO", "3").Kind);
            // Warm: JIT, statics, the pool's arrays on the thread that runs them.
            for (int i = 0; i < 30; i++)
                foreach (var read in reads)
                    Assert.False(c.Call(read).IsError, string.Join(' ', read));
            var before = Allocated(api);
            for (int i = 0; i < 200; i++)
                foreach (var read in reads)
                    c.Call(read);
            var after = Allocated(api);
            foreach (string name in (string[])["geosearch", "georadius_ro", "georadiusbymember_ro", "georadius", "geodist", "geohash", "geopos"])
            {
                Assert.True(after[name].Calls - before[name].Calls >= 200, name);
                Assert.True(after[name].Bytes == before[name].Bytes,
                    $"RESP{protocol} {name} allocated {after[name].Bytes - before[name].Bytes} bytes in {after[name].Calls - before[name].Calls} calls");
            }
        }

        static Dictionary<string, (long Calls, long Bytes)> Allocated(ApiClient api) =>
            api.Get("/api/commands", ContractsJson.Default.CommandStatisticsArray)
                .Where(s => s.Name.StartsWith("geo", StringComparison.Ordinal))
                .ToDictionary(s => s.Name, s => (s.Calls, s.AllocatedBytes ?? -1));
    }

    /// <summary>Scores (bulk strings that are numbers, RESP3 doubles) as the doubles they stand for.</summary>
    private static string Numeric(RespValue reply)
    {
        if (reply.Items is not null)
            return $"{reply.Kind}[{string.Join(", ", reply.Items.Select(Numeric))}]";
        if (reply.Kind == '$' && reply.Text is not null
            && double.TryParse(reply.Text, NumberStyles.Float, CultureInfo.InvariantCulture, out double value))
            return "$" + value.ToString("R", CultureInfo.InvariantCulture);
        return reply.ToString();
    }

    private static string Coordinate(Random random, double range) =>
        ((random.NextDouble() * 2 - 1) * range).ToString("F6", CultureInfo.InvariantCulture);

    /// <summary>
    /// Seeded random points around (0, 0), some sharing a position (equal scores, ordered by name),
    /// and searches of every shape, unit, centre and option over them, in a set large enough to be a
    /// skip list in Redis and one small enough to be a listpack.
    /// </summary>
    private static string[] RandomScript()
    {
        var random = new Random(7);
        var inv = CultureInfo.InvariantCulture;
        var lines = new List<string>();
        var points = new List<(string Lon, string Lat, string Name)>();
        for (int i = 0; i < 300; i++)
            points.Add((Coordinate(random, 5), Coordinate(random, 5), $"m{i}"));
        for (int i = 0; i < 20; i++)
            points.Add((points[i].Lon, points[i].Lat, $"dup{i}"));
        for (int i = 0; i < points.Count; i += 50)
            lines.Add("GEOADD g " + string.Join(' ', points.Skip(i).Take(50).Select(p => $"{p.Lon} {p.Lat} {p.Name}")));
        lines.Add("GEOADD small " + string.Join(' ', points.Take(40).Select(p => $"{p.Lon} {p.Lat} {p.Name}")));
        string[] options =
        [
            "", "WITHDIST", "WITHCOORD", "WITHHASH", "WITHDIST WITHHASH WITHCOORD", "ASC", "DESC", "COUNT 5", "COUNT 5 DESC",
            "COUNT 5 ANY", "COUNT 3 ANY ASC", "COUNT 1000", "COUNT 7 ANY DESC WITHDIST", "COUNT 50 WITHDIST", "COUNT 50 DESC WITHDIST",
        ];
        (string Name, double Metres)[] units = [("m", 1), ("km", 1000), ("mi", 1609.34), ("ft", 0.3048)];
        double[] sizes = [50e3, 100e3, 300e3, 600e3, 1500e3];
        for (int i = 0; i < 150; i++)
        {
            string key = random.Next(2) == 0 ? "g" : "small";
            string option = options[random.Next(options.Length)];
            string from = random.Next(2) == 0
                ? $"FROMLONLAT {((random.NextDouble() * 2 - 1) * 6).ToString("F4", inv)} {((random.NextDouble() * 2 - 1) * 6).ToString("F4", inv)}"
                : $"FROMMEMBER m{random.Next(40)}";
            var unit = units[random.Next(units.Length)];
            double size = sizes[random.Next(sizes.Length)] / unit.Metres;
            string by = random.Next(2) == 0
                ? $"BYRADIUS {size.ToString("F3", inv)} {unit.Name}"
                : $"BYBOX {size.ToString("F3", inv)} {(size * (0.3 + random.NextDouble() * 1.7)).ToString("F3", inv)} {unit.Name}";
            lines.Add($"GEOSEARCH {key} {from} {by} {option}".TrimEnd());
            if (i % 5 == 0)
            {
                string storeOptions = option.Replace("WITHDIST", "").Replace("WITHCOORD", "").Replace("WITHHASH", "").Trim();
                lines.Add($"GEOSEARCHSTORE d {key} {from} {by} {storeOptions} STOREDIST".Replace("  ", " "));
                lines.Add("#ZRANGE d 0 -1 WITHSCORES");
                lines.Add($"GEOSEARCHSTORE d {key} {from} {by} {storeOptions}".TrimEnd().Replace("  ", " "));
                lines.Add("ZRANGE d 0 -1 WITHSCORES");
            }
            if (i % 7 == 0)
                lines.Add($"GEORADIUSBYMEMBER {key} m{random.Next(40)} {size.ToString("F3", inv)} {unit.Name} {option}".TrimEnd());
        }
        return [.. lines];
    }

    private static readonly Dictionary<string, string[]> Conformance = new()
    {
        ["geoadd"] =
        [
            "GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania", "ZRANGE Sicily 0 -1 WITHSCORES",
            "GEOADD Sicily 13.361389 38.115556 Palermo", "GEOADD Sicily CH 13.361389 38.115556 Palermo 15.087269 37.502669 Catania 1 1 x",
            "GEOADD Sicily CH 13.361389 38.115556 Palermo 15 37 Catania", "GEOADD Sicily XX 13.3 38.1 Palermo 2 2 notthere",
            "GEOADD Sicily xx ch 13.3 38.1 Palermo 2 2 notthere", "GEOADD Sicily NX CH 13.1 38.2 Palermo 2 2 y", "GEOADD Sicily nx 13.1 38.2 Palermo 3 3 z",
            "ZRANGE Sicily 0 -1 WITHSCORES", "GEOADD Sicily 1 1 dup 2 2 dup", "GEOADD Sicily CH 3 3 dup 3 3 dup", "ZSCORE Sicily dup",
            "GEOADD Sicily CH CH NX 4 4 w", "GEOADD Sicily NX XX 1 1 a", "GEOADD Sicily XX NX 1 1 a", "GEOADD Sicily 1 1", "GEOADD Sicily 1 1 a 2",
            "GEOADD Sicily CH NX CH", "GEOADD Sicily GT 1 1 a", "GEOADD Sicily INCR 1 1 a", "GEOADD Sicily 1 1 a 2 2",
            "GEOADD Sicily 200 1 a", "GEOADD Sicily 1 85.06 a", "GEOADD Sicily -180.0000001 0 a", "GEOADD Sicily nan 1 a", "GEOADD Sicily 1 nan a",
            "GEOADD Sicily x 1 a", "GEOADD Sicily 1 x a", "GEOADD Sicily x 100 a", "GEOADD Sicily 200 x a", "GEOADD Sicily 1e400 1 a",
            "GEOADD Sicily 1 -1e400 a", "GEOADD Sicily 1e-400 1 a", "GEOADD Sicily inf 1 a", "GEOADD Sicily 1 -inf a", "GEOADD Sicily 0.0078125 100 a",
            "GEOADD Sicily -0.0 100 a", "GEOADD Sicily 1e300 10 a", "GEOADD Sicily 1\\0 1 a", "GEOADD Sicily 1 1 a 2 2 b 300 3 c",
            "EXISTS a", "ZCARD Sicily", "GEOADD nokey XX 1 1 a", "EXISTS nokey", "GEOADD nokey XX CH 1 1 a",
            "SET str v", "GEOADD str 1 1 a", "GEOADD str 1 100 a", "GEOADD str 1 1", "GEOADD str NX XX 1 1 a", "GEOADD str XX 1 1 a",
            "GEOADD edge 180 85.05112878 ne -180 -85.05112878 sw 180 -85.05112878 se -180 85.05112878 nw 0 0 zero -0 -0 negzero",
            "GEOADD edge 1e-310 0 sub 179.9999999 0 e 0 85.05112877 n 0.000001 -0.000001 tiny",
            "ZRANGE edge 0 -1 WITHSCORES", "TYPE edge",
        ],
        ["dist-hash-pos"] =
        [
            "GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania 2.3522 48.8566 Paris -74.006 40.7128 NewYork",
            "GEODIST Sicily Palermo Catania", "GEODIST Sicily Palermo Catania m", "GEODIST Sicily Palermo Catania km", "GEODIST Sicily Palermo Catania KM",
            "GEODIST Sicily Palermo Catania mi", "GEODIST Sicily Palermo Catania Ft", "GEODIST Sicily Paris NewYork km", "GEODIST Sicily Paris Paris",
            "GEODIST Sicily Palermo nobody", "GEODIST Sicily nobody Palermo", "GEODIST Sicily Palermo Catania yd", "GEODIST Sicily Palermo Catania m x",
            "GEODIST Sicily Palermo Catania km\\0junk", "GEODIST nokey a b", "GEODIST nokey a b yd", "GEODIST nokey a b m x",
            "GEOHASH Sicily Palermo Catania Paris NewYork nobody", "GEOHASH Sicily", "GEOHASH nokey a b", "GEOHASH nokey",
            "GEOPOS Sicily Palermo Catania Paris NewYork nobody", "GEOPOS Sicily", "GEOPOS nokey a b", "GEOPOS nokey",
            "SET str v", "GEODIST str a b", "GEODIST str a b km", "GEODIST str a b yd", "GEOHASH str a", "GEOPOS str a",
            "GEOADD edge 180 85.05112878 ne -180 -85.05112878 sw 180 -85.05112878 se -180 85.05112878 nw 0 0 zero 179.9999999 0 e 0 85.05112877 n",
            "GEOPOS edge ne sw se nw zero e n", "GEOHASH edge ne sw se nw zero e n", "GEODIST edge ne sw km", "GEODIST edge nw ne", "GEODIST edge zero e mi",
            "GEODIST edge ne se ft", "GEODIST edge sw se",
            // Scores ZADD wrote: decoded as Redis's (uint64_t) cast and clamp do.
            "ZADD weird -1 neg 1e19 big inf pinf -inf ninf 123.7 frac 1e300 huge 0 zero 4503599627370495 top",
            "GEOPOS weird neg big pinf ninf frac huge zero top", "GEOHASH weird neg big pinf ninf frac huge zero top",
            "GEODIST weird neg big", "GEODIST weird pinf frac km", "GEODIST weird zero top",
        ],
        ["georadius"] =
        [
            "GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania 13.583333 37.316667 Agrigento 12.758489 38.788135 edge2 17.241510 38.222501 edge1",
            "GEORADIUS Sicily 15 37 100 km", "GEORADIUS Sicily 15 37 200 km", "GEORADIUS Sicily 15 37 200 km WITHDIST WITHCOORD WITHHASH",
            "GEORADIUS Sicily 15 37 200 km withhash withcoord", "GEORADIUS Sicily 15 37 200 km WITHDIST ASC", "GEORADIUS Sicily 15 37 200 km WITHDIST DESC",
            "GEORADIUS Sicily 15 37 200 km DESC ASC", "GEORADIUS Sicily 15 37 200 km COUNT 1", "GEORADIUS Sicily 15 37 200 km COUNT 2 DESC WITHDIST",
            "GEORADIUS Sicily 15 37 200 km COUNT 1 ANY", "GEORADIUS Sicily 15 37 200 km ANY COUNT 2", "GEORADIUS Sicily 15 37 200 km COUNT 3 ANY DESC",
            "GEORADIUS Sicily 15 37 200 km COUNT 100", "GEORADIUS Sicily 15 37 200 km COUNT 1 COUNT 3", "GEORADIUS Sicily 15 37 200 mi WITHDIST",
            "GEORADIUS Sicily 15 37 200000 m WITHDIST", "GEORADIUS Sicily 15 37 700000 ft WITHDIST", "GEORADIUS Sicily 15 37 200 KM WITHDIST",
            "GEORADIUS Sicily 15 37 0 km", "GEORADIUS Sicily 15 37 -0 km", "GEORADIUS Sicily 15 37 inf km COUNT 2", "GEORADIUS Sicily 15 37 1e-320 m",
            "GEORADIUS Sicily 15.087269 37.502669 0 m WITHDIST", "GEORADIUS Sicily 15 37 1 km",
            // Errors, in Redis's order: the key's type, the centre, the radius, the unit, then the options one by one, then their combinations.
            "GEORADIUS Sicily x 37 200 km", "GEORADIUS Sicily 15 x 200 km", "GEORADIUS Sicily 15 95 200 km", "GEORADIUS Sicily 15 95 x km",
            "GEORADIUS Sicily 15 37 x km", "GEORADIUS Sicily 15 37 1e400 km", "GEORADIUS Sicily 15 37 -1 km", "GEORADIUS Sicily 15 37 -1 yd",
            "GEORADIUS Sicily 15 37 200 yd", "GEORADIUS Sicily 15 37 200 km foo", "GEORADIUS Sicily 15 37 200 km COUNT", "GEORADIUS Sicily 15 37 200 km COUNT 0",
            "GEORADIUS Sicily 15 37 200 km COUNT -1", "GEORADIUS Sicily 15 37 200 km COUNT x", "GEORADIUS Sicily 15 37 200 km COUNT 1.5",
            "GEORADIUS Sicily 15 37 200 km COUNT x foo", "GEORADIUS Sicily 15 37 200 km foo COUNT x", "GEORADIUS Sicily 15 37 200 km ANY",
            "GEORADIUS Sicily 15 37 200 km ANY foo", "GEORADIUS Sicily 15 37 200 km STORE", "GEORADIUS Sicily 15 37 200 km STOREDIST",
            "GEORADIUS Sicily 15 37 200 km STORE dst WITHDIST", "GEORADIUS Sicily 15 37 200 km WITHHASH STOREDIST dst ANY",
            "GEORADIUS Sicily 15 37 200 km FROMMEMBER Palermo", "GEORADIUS Sicily 15 37 200 km BYRADIUS 1 km",
            "GEORADIUS Sicily 15 37 200 km COUNT 9223372036854775808", "GEORADIUS Sicily 15 37 200 km COUNT 9223372036854775807",
            "GEORADIUS Sicily 15 37", "GEORADIUS Sicily 15 37 200", "SET str v", "GEORADIUS str 15 37 200 km", "GEORADIUS str x 37 200 km foo",
            "GEORADIUS nokey 15 37 200 km", "GEORADIUS nokey 15 37 200 km WITHDIST", "GEORADIUS nokey x 37 200 km", "GEORADIUS nokey 15 37 x km",
            "GEORADIUS nokey 15 37 200 yd", "GEORADIUS nokey 15 37 200 km foo", "GEORADIUS nokey 15 37 200 km ANY",
            // STORE and STOREDIST: the geohashes or the distances in the unit, the last destination named wins, an empty result deletes it.
            "GEORADIUS Sicily 15 37 200 km STORE dst", "ZRANGE dst 0 -1 WITHSCORES", "GEORADIUS Sicily 15 37 200 km STOREDIST dst",
            "#ZRANGE dst 0 -1 WITHSCORES", "GEORADIUS Sicily 15 37 200 mi COUNT 2 DESC STOREDIST dst", "#ZRANGE dst 0 -1 WITHSCORES",
            "GEORADIUS Sicily 15 37 200 km STORE dst STOREDIST dst2", "EXISTS dst", "#ZRANGE dst2 0 -1 WITHSCORES",
            "GEORADIUS Sicily 15 37 200 km STOREDIST dst3 STORE dst4", "EXISTS dst3", "ZRANGE dst4 0 -1 WITHSCORES",
            "GEORADIUS Sicily 15 37 200 km COUNT 1 ANY STORE dst", "ZRANGE dst 0 -1 WITHSCORES",
            "GEORADIUS Sicily 15 37 1 km STORE dst", "EXISTS dst", "GEORADIUS Sicily 15 37 1 km STORE dst", "GEORADIUS nokey 15 37 1 km STORE dst2",
            "EXISTS dst2", "GEORADIUS nokey 15 37 1 km STORE dst2", "SET s2 x", "EXPIRE s2 100", "GEORADIUS Sicily 15 37 200 km STORE s2", "TTL s2",
            "TYPE s2", "LPUSH l2 x", "GEORADIUS nokey 15 37 1 km STORE l2", "EXISTS l2", "GEORADIUS str 15 37 200 km STORE dst",
            "GEORADIUS Sicily 15 37 200 km store\\0 d5", "ZCARD d5",
            // The _RO form has no STORE.
            "GEORADIUS_RO Sicily 15 37 200 km WITHDIST", "GEORADIUS_RO Sicily 15 37 200 km COUNT 2 DESC WITHCOORD", "GEORADIUS_RO Sicily 15 37 200 km STORE dst",
            "GEORADIUS_RO Sicily 15 37 200 km STOREDIST dst", "GEORADIUS_RO nokey 15 37 200 km", "GEORADIUS_RO str 15 37 200 km", "GEORADIUS_RO Sicily 15 37 200 km ANY",
            "GEORADIUS Sicily 15 37 200 km WITHDIST\\0x WITHCOORD",
        ],
        ["georadiusbymember"] =
        [
            "GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania 13.583333 37.316667 Agrigento",
            "GEORADIUSBYMEMBER Sicily Agrigento 100 km", "GEORADIUSBYMEMBER Sicily Palermo 200 km WITHDIST WITHCOORD WITHHASH",
            "GEORADIUSBYMEMBER Sicily Palermo 200 km DESC", "GEORADIUSBYMEMBER Sicily Palermo 200 km COUNT 1", "GEORADIUSBYMEMBER Sicily Palermo 200 km COUNT 2 ANY",
            "GEORADIUSBYMEMBER Sicily Palermo 0 km WITHDIST", "GEORADIUSBYMEMBER Sicily Palermo 200 MI WITHDIST",
            "GEORADIUSBYMEMBER Sicily nobody 200 km", "GEORADIUSBYMEMBER Sicily nobody x km", "GEORADIUSBYMEMBER Sicily Palermo x km",
            "GEORADIUSBYMEMBER Sicily Palermo -5 km", "GEORADIUSBYMEMBER Sicily Palermo 5 yd", "GEORADIUSBYMEMBER Sicily Palermo 5 km foo",
            "GEORADIUSBYMEMBER Sicily Palermo 5 km ANY", "GEORADIUSBYMEMBER Sicily Palermo 5 km STORE d WITHHASH",
            // A missing key: the member and radius are not even read, the options still are.
            "GEORADIUSBYMEMBER nokey nobody x yd", "GEORADIUSBYMEMBER nokey nobody x yd WITHDIST", "GEORADIUSBYMEMBER nokey nobody x yd foo",
            "GEORADIUSBYMEMBER nokey nobody x yd COUNT x", "GEORADIUSBYMEMBER nokey nobody x yd ANY", "GEORADIUSBYMEMBER nokey nobody x yd STORE d WITHDIST",
            "GEORADIUSBYMEMBER nokey nobody x yd STORE d", "SET d v", "GEORADIUSBYMEMBER nokey nobody x yd STORE d", "EXISTS d",
            "SET str v", "GEORADIUSBYMEMBER str nobody x yd", "GEORADIUSBYMEMBER str Palermo 200 km",
            "GEORADIUSBYMEMBER Sicily Palermo 200 km STORE d", "ZRANGE d 0 -1 WITHSCORES", "GEORADIUSBYMEMBER Sicily Palermo 200 km STOREDIST d",
            "#ZRANGE d 0 -1 WITHSCORES", "GEORADIUSBYMEMBER Sicily Palermo 200 km STOREDIST Sicily", "#ZRANGE Sicily 0 -1 WITHSCORES",
            "GEORADIUSBYMEMBER_RO Sicily Catania 200 km WITHDIST WITHCOORD", "GEORADIUSBYMEMBER_RO Sicily Catania 200 km STORE d",
            "GEORADIUSBYMEMBER_RO nokey Catania x yd", "GEORADIUSBYMEMBER_RO nokey Catania x yd STORE d",
        ],
        ["geosearch"] =
        [
            "GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania 12.758489 38.788135 edge1 17.241510 38.222501 edge2",
            "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km ASC", "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 400 400 km ASC WITHCOORD WITHDIST",
            "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 200 km WITHDIST WITHCOORD WITHHASH", "GEOSEARCH Sicily BYRADIUS 200 km FROMMEMBER Palermo DESC",
            "GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 200 100 mi COUNT 2", "GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 0 0 m WITHDIST",
            "GEOSEARCH Sicily FROMMEMBER Palermo FROMMEMBER Catania BYRADIUS 1 km", "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1 km BYRADIUS 200 km",
            "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 1 km BYBOX 400 400 km COUNT 1 ANY", "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX inf inf km WITHHASH",
            "geosearch Sicily fromlonlat 15 37 bybox 400 400 KM withdist count 3 desc",
            // Errors, each where the walk meets it, then the combinations.
            "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 400 x km", "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX x 400 km", "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX x y km",
            "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX -1 400 km", "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 -400 km", "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX -1 x km",
            "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 400 yd", "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 400", "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1",
            "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS x km", "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS -1 km", "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1 yd",
            "GEOSEARCH Sicily FROMLONLAT 15 BYRADIUS 1 km", "GEOSEARCH Sicily FROMLONLAT x 37 BYRADIUS 1 km", "GEOSEARCH Sicily FROMLONLAT 15 100 BYRADIUS 1 km",
            "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1 km BYBOX 1 1 km", "GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 1 km BYRADIUS 1 km",
            "GEOSEARCH Sicily FROMLONLAT 15 37 FROMMEMBER Palermo BYRADIUS 1 km", "GEOSEARCH Sicily FROMMEMBER Palermo FROMLONLAT 15 37 BYRADIUS 1 km",
            "GEOSEARCH Sicily FROMMEMBER nobody BYRADIUS 1 km", "GEOSEARCH Sicily BYRADIUS x km FROMMEMBER nobody", "GEOSEARCH Sicily FROMMEMBER nobody BYRADIUS x km",
            "GEOSEARCH Sicily FROMMEMBER", "GEOSEARCH Sicily BYRADIUS 1 km WITHDIST", "GEOSEARCH Sicily FROMMEMBER Palermo WITHDIST",
            "geoSearch Sicily BYRADIUS 1 km WITHDIST", "geoSearch Sicily FROMMEMBER Palermo ASC", "GEOSEARCH Sicily WITHDIST ASC COUNT 1",
            "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 km ANY", "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 km COUNT 0",
            "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 km STORE d", "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 km STOREDIST",
            "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 km foo", "GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 1 km COUNT x ANY",
            "GEOSEARCH nokey FROMMEMBER nobody BYRADIUS 1 km", "GEOSEARCH nokey FROMMEMBER nobody BYRADIUS x km", "GEOSEARCH nokey BYRADIUS 1 km",
            "GEOSEARCH nokey FROMMEMBER nobody", "GEOSEARCH nokey FROMMEMBER nobody BYRADIUS 1 km ANY", "GEOSEARCH nokey FROMLONLAT 1 100 BYRADIUS 1 km",
            "SET str v", "GEOSEARCH str FROMMEMBER nobody BYRADIUS 1 km", "GEOSEARCH str foo", "GEOSEARCH Sicily FROMMEMBER Palermo",
            "GEOSEARCH Sicily frommember\\0 Palermo byradius\\0x 200 km\\0 withdist\\0", "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1\\0 km",
            "GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km COUNT 2\\0",
        ],
        ["geosearchstore"] =
        [
            "GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania 12.758489 38.788135 edge1 17.241510 38.222501 edge2",
            "GEOSEARCHSTORE d Sicily FROMLONLAT 15 37 BYBOX 400 400 km ASC COUNT 3", "ZRANGE d 0 -1 WITHSCORES", "TYPE d",
            "GEOSEARCHSTORE d Sicily FROMLONLAT 15 37 BYBOX 400 400 km ASC COUNT 3 STOREDIST", "#ZRANGE d 0 -1 WITHSCORES",
            "GEOSEARCHSTORE d Sicily FROMMEMBER Palermo BYRADIUS 200 mi STOREDIST STOREDIST DESC", "#ZRANGE d 0 -1 WITHSCORES",
            "GEOSEARCHSTORE d Sicily FROMMEMBER Palermo BYRADIUS 200 km COUNT 1 ANY", "ZRANGE d 0 -1 WITHSCORES",
            "GEOSEARCHSTORE d Sicily FROMMEMBER Palermo BYRADIUS 200 km WITHDIST", "GEOSEARCHSTORE d Sicily FROMMEMBER Palermo BYRADIUS 200 km WITHHASH foo",
            "GEOSEARCHSTORE d Sicily FROMMEMBER Palermo BYRADIUS 200 km WITHCOORD COUNT x", "GEOSEARCHSTORE d Sicily FROMMEMBER Palermo BYRADIUS 200 km STORE x",
            "GEOSEARCHSTORE d Sicily FROMMEMBER Palermo BYRADIUS 200 km ANY", "GEOSEARCHSTORE d Sicily FROMMEMBER Palermo",
            "geosearchstore d Sicily BYRADIUS 200 km", "GeoSearchStore d Sicily FROMMEMBER Palermo", "GEOSEARCHSTORE d Sicily FROMMEMBER nobody BYRADIUS 1 km",
            "GEOSEARCHSTORE d Sicily FROMMEMBER Palermo BYRADIUS 1 km", "EXISTS d", "GEOSEARCHSTORE d Sicily FROMMEMBER Palermo BYRADIUS 1 km",
            "SET d v", "EXPIRE d 100", "GEOSEARCHSTORE d Sicily FROMMEMBER Palermo BYRADIUS 200 km", "TTL d", "TYPE d",
            "GEOSEARCHSTORE d nokey FROMMEMBER Palermo BYRADIUS 200 km", "EXISTS d", "GEOSEARCHSTORE d nokey FROMMEMBER Palermo BYRADIUS 200 km",
            "GEOSEARCHSTORE d nokey FROMMEMBER Palermo BYRADIUS x km", "GEOSEARCHSTORE d nokey FROMMEMBER Palermo BYRADIUS 200 km WITHDIST",
            "SET str v", "GEOSEARCHSTORE d str FROMMEMBER Palermo BYRADIUS 200 km", "GEOSEARCHSTORE str Sicily FROMMEMBER Palermo BYRADIUS 200 km",
            "TYPE str", "ZRANGE str 0 -1 WITHSCORES", "GEOSEARCHSTORE Sicily Sicily FROMMEMBER Palermo BYRADIUS 100 km STOREDIST",
            "#ZRANGE Sicily 0 -1 WITHSCORES", "GEOSEARCHSTORE d Sicily FROMLONLAT 13.36 38.11 BYRADIUS 1 km storedist\\0", "#ZRANGE d 0 -1 WITHSCORES",
        ],
        // Members at equal distances (a ring of positions around the centre, and positions shared by
        // several members): ASC, DESC, COUNT and ANY leave them where glibc's qsort and Redis's pqsort do.
        ["ties"] =
        [
            "GEOADD big 10 11 n 10 9 s 11 10 e 9 10 w 10.5 10.5 ne 9.5 10.5 nw 10.5 9.5 se 9.5 9.5 sw 10 11 n2 10 9 s2 11 10 e2 9 10 w2 10 10 c 10 10 c2 10 10 c1",
            "GEOADD big " + string.Join(' ', Enumerable.Range(0, 130).Select(i => (20 + i * 0.01).ToString("F2", CultureInfo.InvariantCulture) + $" 20 far{i}")),
            "GEOADD small 10 11 n 10 9 s 11 10 e 9 10 w 10.5 10.5 ne 9.5 10.5 nw 10.5 9.5 se 9.5 9.5 sw 10 11 n2 10 9 s2 11 10 e2 9 10 w2 10 10 c 10 10 c2 10 10 c1",
            "GEORADIUS big 10 10 200 km", "GEORADIUS small 10 10 200 km", "GEORADIUS big 10 10 200 km ASC WITHDIST", "GEORADIUS small 10 10 200 km DESC WITHDIST",
            "GEORADIUS big 10 10 200 km COUNT 3", "GEORADIUS big 10 10 200 km COUNT 7", "GEORADIUS big 10 10 200 km COUNT 7 DESC", "GEORADIUS small 10 10 200 km COUNT 9 DESC",
            "GEORADIUS big 10 10 200 km COUNT 5 ANY", "GEORADIUS big 10 10 200 km COUNT 2 ANY DESC", "GEORADIUS small 10 10 200 km COUNT 12 ANY ASC",
            "GEOSEARCH big FROMLONLAT 10 10 BYBOX 400 400 km", "GEOSEARCH big FROMLONLAT 10 10 BYBOX 400 400 km ASC", "GEOSEARCH big FROMLONLAT 10 10 BYBOX 400 400 km COUNT 8",
            "GEOSEARCH big FROMLONLAT 10 10 BYBOX 400 400 km COUNT 8 DESC", "GEOSEARCH big FROMMEMBER c BYRADIUS 112 km WITHDIST",
            "GEOSEARCH big FROMLONLAT 21 20 BYRADIUS 500 km COUNT 41", "GEOSEARCH big FROMLONLAT 21 20 BYRADIUS 500 km COUNT 41 DESC WITHDIST",
            "GEOSEARCH big FROMLONLAT 21 20 BYRADIUS 500 km COUNT 60 ANY", "GEOSEARCH big FROMLONLAT 21 20 BYRADIUS 500 km DESC",
            "GEOSEARCHSTORE d big FROMLONLAT 10 10 BYBOX 400 400 km COUNT 8", "ZRANGE d 0 -1 WITHSCORES",
            "GEOSEARCHSTORE d big FROMLONLAT 10 10 BYBOX 400 400 km COUNT 8 DESC STOREDIST", "#ZRANGE d 0 -1 WITHSCORES",
        ],
        // The grid's corners and edges: positions one cell past it (longitude 180, latitude
        // 85.05112878), searches from the poles' limits and across the antimeridian.
        ["edges"] =
        [
            "GEOADD edge 180 85.05112878 ne -180 -85.05112878 sw 180 -85.05112878 se -180 85.05112878 nw 0 0 zero 179.9999999 0 e -179.9999999 0 w 0 85.05112877 n 0 -85.0511 s",
            "GEOSEARCH edge FROMLONLAT 0 85.05112878 BYRADIUS 0 m WITHDIST", "GEOSEARCH edge FROMLONLAT 0 85.05112878 BYRADIUS 1 m WITHDIST",
            "GEOSEARCH edge FROMLONLAT 0 85.05112878 BYRADIUS 1000 km WITHDIST ASC", "GEOSEARCH edge FROMLONLAT 180 0 BYRADIUS 100 km WITHDIST ASC",
            "GEOSEARCH edge FROMLONLAT -180 0 BYRADIUS 100 km WITHDIST ASC", "GEOSEARCH edge FROMLONLAT 180 85.05112878 BYRADIUS 1 km WITHCOORD",
            "GEOSEARCH edge FROMLONLAT -180 -85.05112878 BYRADIUS 20000 km WITHDIST ASC", "GEOSEARCH edge FROMLONLAT 0 0 BYRADIUS inf km WITHHASH ASC",
            "GEOSEARCH edge FROMLONLAT 0 0 BYBOX 40000 40000 km WITHCOORD ASC", "GEOSEARCH edge FROMLONLAT 179.99 85 BYBOX inf inf km WITHDIST DESC",
            "GEOSEARCH edge FROMLONLAT -179.99 -85 BYRADIUS 3000 km WITHDIST", "GEOSEARCH edge FROMLONLAT 0 -85.05112878 BYBOX 100 100 km WITHCOORD",
            "GEOSEARCH edge FROMMEMBER ne BYRADIUS 0 m WITHDIST", "GEOSEARCH edge FROMMEMBER ne BYBOX 0 0 m WITHDIST", "GEOSEARCH edge FROMMEMBER e BYRADIUS 100 km WITHDIST",
            "GEORADIUSBYMEMBER edge ne 100 km WITHCOORD", "GEORADIUSBYMEMBER edge w 10 km WITHCOORD WITHDIST", "GEORADIUS edge 0 0 1e-320 km WITHDIST",
            "ZADD weird -1 neg 1e19 big inf pinf -inf ninf 123.7 frac 1e300 huge",
            "GEOSEARCH weird FROMLONLAT -180 -85.05 BYRADIUS 100 km WITHHASH WITHCOORD WITHDIST", "GEOSEARCH weird FROMMEMBER frac BYRADIUS 100 km WITHHASH WITHDIST",
            "GEOSEARCH weird FROMMEMBER neg BYRADIUS 100 km WITHHASH WITHDIST", "GEORADIUS weird -180 -85 500 km STORE wd", "ZRANGE wd 0 -1 WITHSCORES",
            "GEOADD sub 1e-310 0 a -0 -0 b", "GEOPOS sub a b", "GEOSEARCH sub FROMLONLAT 0 0 BYBOX -0 -0 km WITHDIST", "GEOSEARCH sub FROMLONLAT -0 -0 BYRADIUS 0 km",
        ],
    };
}
