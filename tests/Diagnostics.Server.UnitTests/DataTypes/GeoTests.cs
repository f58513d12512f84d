using System.Text;
using Diagnostics.Server.DataTypes.Geo;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The geo core against redis-server 7.0.15's own answers. GeoTests.Vectors.cs holds what
/// capture_geo_vectors.py read from a real redis-server with redis-cli (each block under the
/// commands it ran): GEOADD scores, GEOPOS, GEOHASH, GEODIST in every unit, hand-picked and
/// randomised GEOSEARCH replies (members in Redis's unsorted order, distances as printed, sorted
/// and COUNT orders). A search here is what a command will do: scan <see cref="GeoSearch.Areas"/>
/// in order over the members sorted as a zset sorts them (score, then member bytes), keep what
/// <see cref="GeoSearch.ContainsScore"/> accepts, and order it with <see cref="GeoSort"/>.
/// </summary>
public sealed partial class GeoTests
{
    private sealed record PlaceVector(string Name, double Longitude, double Latitude, string Score, string GeoPosLongitude, string GeoPosLatitude, string GeoHash);
    private sealed record DistanceVector(string From, string To, string Unit, string Reply);
    private sealed record SearchVector(string Arguments, string[] Unsorted, Hit[] Ascending);
    private sealed record Hit(string Member, string Distance, long Hash, string Longitude, string Latitude);

    [Fact]
    public void PlacesEncodeDecodeAndHashAsRedis()
    {
        foreach (var place in Places)
        {
            Assert.True(GeoHash.TryEncode(place.Longitude, place.Latitude, out ulong bits), place.Name);
            Assert.Equal(double.Parse(place.Score), GeoHash.ToScore(bits));
            AssertPosition(place.Name, GeoHash.FromScore(GeoHash.ToScore(bits)), place.GeoPosLongitude, place.GeoPosLatitude, place.GeoHash);
        }
    }

    [Fact]
    public void RandomPointsEncodeDecodeAndHashAsRedis()
    {
        var vectors = RandomSet.Value;
        Assert.Equal(1020, vectors.Points.Count);
        foreach (var (name, lon, lat, score, posLon, posLat, hash) in vectors.Points)
        {
            Assert.True(GeoHash.TryEncode(lon, lat, out ulong bits), name);
            Assert.Equal(score, GeoHash.ToScore(bits));
            // GEOPOS decodes the stored score, which rounds the bits at longitude 180 (2^53 and up).
            AssertPosition(name, GeoHash.FromScore(score), posLon, posLat, hash);
        }
    }

    [Fact]
    public void ScoresThatGeoAddDidNotWriteDecodeAsRedisCastsThem()
    {
        // redis-cli -p 7391 ZADD g -1 neg 1e19 big inf pinf -inf ninf 123.7 frac 1e300 huge
        // redis-cli -p 7391 GEOPOS g neg big pinf ninf frac huge
        // redis-cli -p 7391 GEOHASH g neg big pinf ninf frac huge
        AssertPosition("neg", GeoHash.FromScore(-1), "180", "85.0511287799999991", "bp05b5048p0");
        AssertPosition("big", GeoHash.FromScore(1e19), "180", "85.0511287799999991", "bp05b5048p0");
        AssertPosition("pinf", GeoHash.FromScore(double.PositiveInfinity), "-179.99999731779098511", "-85.05112751263942528", "00bh0hbj200");
        AssertPosition("ninf", GeoHash.FromScore(double.NegativeInfinity), "180", "-85.05112751263942528", "00bh0hbj200");
        AssertPosition("frac", GeoHash.FromScore(123.7), "-179.99995976686477661", "-85.05109456126433543", "00bh0hbj2y0");
        AssertPosition("huge", GeoHash.FromScore(1e300), "-179.99999731779098511", "-85.05112751263942528", "00bh0hbj200");
        Assert.Equal(0x8000000000000000UL, GeoHash.FromScore(double.NaN));   // cvttsd2si's answer (ZADD refuses NaN anyway)
        // redis-cli -p 7391 GEODIST g neg big  -> 0.0000
        GeoHash.Decode(GeoHash.FromScore(-1), out double x1, out double y1);
        GeoHash.Decode(GeoHash.FromScore(1e19), out double x2, out double y2);
        Assert.Equal("0.0000", Text(GeoFormat.Distance(GeoHash.Distance(x1, y1, x2, y2), 1, Buffer), Buffer));
    }

    [Fact]
    public void InvalidPositionsAreRefusedWithRedisText()
    {
        // redis-cli -p 7391 GEOADD k 200 10 a          -> ERR invalid longitude,latitude pair 200.000000,10.000000
        // redis-cli -p 7391 GEOADD k 0.0078125 100 a   -> ERR invalid longitude,latitude pair 0.007812,100.000000
        // redis-cli -p 7391 GEOADD k -0.0 100 a        -> ERR invalid longitude,latitude pair -0.000000,100.000000
        // redis-cli -p 7391 GEOADD k -1e-9 100 a       -> ERR invalid longitude,latitude pair -0.000000,100.000000
        // redis-cli -p 7391 GEOADD k 0.0000015 100 a   -> ERR invalid longitude,latitude pair 0.000002,100.000000
        // redis-cli -p 7391 GEOADD k 0.0000025 100 a   -> ERR invalid longitude,latitude pair 0.000003,100.000000
        // redis-cli -p 7391 GEOADD k inf 0 a           -> ERR invalid longitude,latitude pair inf,0.000000
        // redis-cli -p 7391 GEOADD k 1e300 10 a        -> ERR invalid longitude,latitude pair 1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160.000000,10.000000
        // redis-cli -p 7391 GEOADD k nan 0 a           -> ERR value is not a valid float
        (double Lon, double Lat, string Error)[] cases =
        [
            (200, 10, "ERR invalid longitude,latitude pair 200.000000,10.000000"),
            (0.0078125, 100, "ERR invalid longitude,latitude pair 0.007812,100.000000"),
            (-0.0, 100, "ERR invalid longitude,latitude pair -0.000000,100.000000"),
            (-1e-9, 100, "ERR invalid longitude,latitude pair -0.000000,100.000000"),
            (0.0000015, 100, "ERR invalid longitude,latitude pair 0.000002,100.000000"),
            (0.0000025, 100, "ERR invalid longitude,latitude pair 0.000003,100.000000"),
            (double.PositiveInfinity, 0, "ERR invalid longitude,latitude pair inf,0.000000"),
            (1e300, 10, "ERR invalid longitude,latitude pair 1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160.000000,10.000000"),
        ];
        foreach (var (lon, lat, error) in cases)
        {
            Assert.False(GeoHash.TryEncode(lon, lat, out _));
            Assert.Equal(error, GeoErrors.InvalidLongitudeLatitude(lon, lat));
        }
        Assert.False(GeoHash.TryEncode(double.NaN, 0, out _));
        Assert.False(GeoHash.TryEncode(0, double.NaN, out _));
        Assert.False(GeoHash.TryEncode(-180.00000000000003, 0, out _));
        Assert.False(GeoHash.TryEncode(0, 85.05112878000001, out _));
        Assert.True(GeoHash.TryEncode(-180, -85.05112878, out ulong corner));
        Assert.Equal(0UL, corner);
        Assert.Equal("-inf", GeoFormat.FormatFixed(double.NegativeInfinity, 6));
        Assert.Equal("2.500000", GeoFormat.FormatFixed(2.5, 6));
        Assert.Equal("0.000000", GeoFormat.FormatFixed(5e-7, 6));   // 5e-7 is a hair below the tie
    }

    [Fact]
    public void DistancesInEveryUnitAsRedis()
    {
        var scores = Places.ToDictionary(p => p.Name, p => double.Parse(p.Score));
        foreach (var vector in Distances)
        {
            GeoHash.Decode(GeoHash.FromScore(scores[vector.From]), out double x1, out double y1);
            GeoHash.Decode(GeoHash.FromScore(scores[vector.To]), out double x2, out double y2);
            Assert.True(GeoUnits.TryParse(Encoding.ASCII.GetBytes(vector.Unit), out double unit));
            int length = GeoFormat.Distance(GeoHash.Distance(x1, y1, x2, y2), unit, Buffer);
            Assert.Equal(vector.Reply, Text(length, Buffer));
        }
    }

    [Fact]
    public void HandPickedSearchesScanAndSortAsRedis()
    {
        var set = new GeoSet(Places.Select(p => (p.Name, double.Parse(p.Score))));
        foreach (var search in Searches)
        {
            GeoShape shape = ParseShape(search.Arguments, set);
            List<(string Member, GeoMatch Match)> found = set.Search(shape, limit: 0);
            Assert.True(search.Unsorted.SequenceEqual(found.Select(f => f.Member)),
                $"{search.Arguments}: expected [{string.Join(' ', search.Unsorted)}], got [{string.Join(' ', found.Select(f => f.Member))}]");

            var matches = found.Select(f => f.Match).ToArray();
            GeoSort.Sort(matches, GeoOrder.Ascending, count: 0);
            Assert.Equal(search.Ascending.Length, matches.Length);
            for (int i = 0; i < matches.Length; i++)
            {
                var (expected, match) = (search.Ascending[i], matches[i]);
                Assert.Equal(expected.Member, found[match.Member].Member);
                Assert.Equal(expected.Distance, Text(GeoFormat.Distance(match.DistanceMeters, shape.MetresPerUnit, Buffer), Buffer));
                Assert.Equal(expected.Hash, (long)match.Score);
                Assert.Equal(expected.Longitude, Text(GeoFormat.Coordinate(match.Longitude, Buffer), Buffer));
                Assert.Equal(expected.Latitude, Text(GeoFormat.Coordinate(match.Latitude, Buffer), Buffer));
            }
        }
    }

    [Fact]
    public void EqualDistancesKeepRedisSortOrderWithAndWithoutCount()
    {
        var set = new GeoSet(TieMembers.Select(t =>
        {
            Assert.True(GeoHash.TryEncode(t.Longitude, t.Latitude, out ulong bits));
            return (t.Member, GeoHash.ToScore(bits));
        }));
        var shape = GeoShape.ByRadius(10, 10, 10, GeoUnits.Kilometres);
        foreach (var (options, expected) in TieOrders)
        {
            ParseOptions(options, out GeoOrder order, out long count, out bool any);
            Assert.Equal(expected, RunSearch(set, shape, order, count, any));
        }
    }

    [Fact]
    public void RandomSearchesAsRedis()
    {
        var vectors = RandomSet.Value;
        var set = new GeoSet(vectors.Points.Select(p => (p.Name, p.Score)));
        int members = 0, ordered = 0;
        foreach (var (arguments, hits, orderOptions, orderedMembers) in vectors.Searches)
        {
            GeoShape shape = ParseShape(arguments, set);
            var found = set.Search(shape, limit: 0);
            // The stored distance is the unrounded double: it must be bit-identical, not just print the same.
            string expected = string.Join(' ', hits.Select(h => $"{h.Member}:{h.Distance}:{h.Stored:R}"));
            string actual = string.Join(' ', found.Select(f =>
                $"{f.Member}:{Text(GeoFormat.Distance(f.Match.DistanceMeters, shape.MetresPerUnit, Buffer), Buffer)}:{f.Match.DistanceMeters / shape.MetresPerUnit:R}"));
            Assert.True(expected == actual, $"GEOSEARCH rnd {arguments}\nexpected {expected}\nactual   {actual}");
            members += hits.Count;
            if (orderOptions is not null)
            {
                ParseOptions(orderOptions, out GeoOrder order, out long count, out bool any);
                Assert.Equal(orderedMembers, RunSearch(set, shape, order, count, any));
                ordered++;
            }
        }
        Assert.True(vectors.Searches.Count >= 400);
        Assert.True(members > 5000 && ordered > 50, $"{members} members, {ordered} sorted replies");
    }

    [Fact]
    public void AreasFollowRedisPlanOnKnownCases()
    {
        Span<GeoScoreRange> ranges = stackalloc GeoScoreRange[GeoSearch.MaxAreas];

        // A zero radius asks for step 26; the centre cell and the neighbours it does not reach past are pruned away.
        Assert.True(GeoHash.TryEncode(10, 10, out ulong bits));
        Assert.Equal(1, GeoSearch.Areas(GeoShape.ByRadius(10, 10, 0, 1), ranges));
        Assert.Equal(new GeoScoreRange(bits, bits + 1).ToString(), ranges[0].ToString());
        Assert.True(ranges[0].Contains(GeoHash.ToScore(bits)) && !ranges[0].Contains(GeoHash.ToScore(bits + 1)));

        // Step 1 (radius too large for any finer cell): the four quarter-worlds, duplicates skipped, nothing pruned.
        int count = GeoSearch.Areas(GeoShape.ByRadius(0, 0, 1e30, 1), ranges);
        Assert.Equal(4, count);
        Assert.Equal("[3377699720527872, 4503599627370496) [2251799813685248, 3377699720527872) [1125899906842624, 2251799813685248) [0, 1125899906842624)",
            string.Join(' ', ranges[..count].ToArray().Select(r => r.ToString())));
        Assert.Equal(1.0 * (1L << 52), ranges[0].Max);
        var score = ranges[1].ToScoreRange();
        Assert.True(score.Contains(2251799813685248) && !score.Contains(3377699720527872));

        // The exact upper latitude encodes one row past the grid, so the centre's range lies above the
        // grid's scores, where GEOADD put such members. Its north neighbour wraps to the bottom rows,
        // which makes Redis decrease the step to 25; then north and east are pruned, south is the
        // grid's top row, west keeps the stray row, south-west is the top row again.
        // Redis's replies to searches from there are among the hand-picked vectors.
        count = GeoSearch.Areas(GeoShape.ByRadius(0, GeoHash.MaxLatitude, 0, 1), ranges);
        Assert.Equal("[6755399441055744, 6755399441055748) [3752999689475412, 3752999689475416) [5254199565265576, 5254199565265580) [2251799813685244, 2251799813685248)",
            string.Join(' ', ranges[..count].ToArray().Select(r => r.ToString())));

        Assert.Equal(26, GeoSearch.EstimateStep(0, 0));
        Assert.Equal(26, GeoSearch.EstimateStep(-0.0, 89));
        Assert.Equal(1, GeoSearch.EstimateStep(double.PositiveInfinity, 0));
        Assert.Equal(1, GeoSearch.EstimateStep(double.NaN, 0));
        Assert.Equal(GeoSearch.EstimateStep(1000, 0) - 2, GeoSearch.EstimateStep(1000, 81));
        Assert.Equal(GeoSearch.EstimateStep(1000, 0) - 1, GeoSearch.EstimateStep(1000, -70));
    }

    [Fact]
    public void HostileArgumentsNeverThrow()
    {
        Span<GeoScoreRange> ranges = stackalloc GeoScoreRange[GeoSearch.MaxAreas];
        double[] sizes = [0, -0.0, 1e-320, 1e-9, 1, 1e7, 2e7, 1e30, 1e308, double.MaxValue, double.PositiveInfinity, double.NaN];
        double[] coordinates = [0, -0.0, 1e-300, 45, 66.0000001, 80.5, GeoHash.MaxLatitude, GeoHash.MinLatitude, 180, -180, 179.99999999, double.NaN, double.PositiveInfinity, double.NegativeInfinity, 1e300];
        double[] units = [GeoUnits.Metres, GeoUnits.Kilometres, GeoUnits.Feet, GeoUnits.Miles];
        foreach (double lon in coordinates)
            foreach (double lat in coordinates)
                foreach (double size in sizes)
                    foreach (double unit in units)
                        foreach (var shape in new[] { GeoShape.ByRadius(lon, lat, size, unit), GeoShape.ByBox(lon, lat, size, size, unit), GeoShape.ByBox(lon, lat, size, 0, unit) })
                        {
                            int count = GeoSearch.Areas(shape, ranges);
                            Assert.InRange(count, GeoHash.IsValid(lon, lat) ? 1 : 0, GeoSearch.MaxAreas);
                            for (int i = 0; i < count; i++)
                                Assert.True(ranges[i].MinBits < ranges[i].MaxBits);
                            GeoSearch.Contains(shape, 10, 10, out _);
                            GeoSearch.Contains(shape, double.NaN, 10, out _);
                        }

        // Redis accepts "inf" as a radius or box side: everything the ranges hold is inside.
        Assert.True(GeoSearch.Contains(GeoShape.ByRadius(0, 0, double.PositiveInfinity, 1), 180, 85, out double far));
        Assert.True(far > 1e7);
        Assert.True(GeoSearch.Contains(GeoShape.ByBox(0, 0, double.PositiveInfinity, double.PositiveInfinity, 1000), -180, -85, out _));
        // A zero box holds only its own centre; a zero radius likewise.
        Assert.True(GeoSearch.Contains(GeoShape.ByBox(3, 4, 0, 0, 1), 3, 4, out double zero) && zero == 0);
        Assert.False(GeoSearch.Contains(GeoShape.ByBox(3, 4, 0, 0, 1), 3, 4.0000000001, out _));
        Assert.True(GeoSearch.Contains(GeoShape.ByRadius(3, 4, 0, 1), 3, 4, out _));
        Assert.False(GeoSearch.Contains(GeoShape.ByRadius(3, 4, 0, 1), 3.0000000001, 4, out _));
        // Comparisons with NaN do not refuse, as in Redis (which never gets NaN past its parser).
        Assert.True(GeoSearch.Contains(GeoShape.ByRadius(0, 0, double.NaN, 1), 1, 1, out _));

        Span<byte> text = stackalloc byte[GeoFormat.MaxHumanDoubleLength];
        Assert.Equal("-922337203685477.5808", Text(GeoFormat.FixedPoint4(double.NaN, text), text));
        Assert.Equal("-922337203685477.5808", Text(GeoFormat.FixedPoint4(1e300, text), text));
        Assert.Equal("0.0000", Text(GeoFormat.FixedPoint4(-0.0, text), text));
        Assert.Equal("0.0000", Text(GeoFormat.FixedPoint4(-0.00001, text), text));
        Assert.Equal("-0.0001", Text(GeoFormat.FixedPoint4(-0.00006, text), text));
        Assert.Equal("inf", Text(GeoFormat.Coordinate(double.PositiveInfinity, text), text));
        Assert.Equal("-inf", Text(GeoFormat.Coordinate(double.NegativeInfinity, text), text));
        Assert.Equal("0", Text(GeoFormat.Coordinate(-0.0, text), text));
        Assert.Equal("0", Text(GeoFormat.Coordinate(-1e-300, text), text));
        Assert.Equal("0", Text(GeoFormat.Coordinate(double.Epsilon, text), text));
        Assert.Equal("100000000000000000000", Text(GeoFormat.Coordinate(1e20, text), text));
        Assert.Equal(309, GeoFormat.Coordinate(double.MaxValue, text));
    }

    [Fact]
    public void FormatsRoundAsRedisDoes()
    {
        // fixedpoint_d2string rounds the product d × 10^4 to even: 0.00125 × 10^4 is 12.5 in doubles,
        // so "0.0012", where printf's "%.4f" would round the exact 0.001250000000000000026 up to "0.0013".
        Assert.Equal("0.0012", Text(GeoFormat.FixedPoint4(0.00125, Buffer), Buffer));
        Assert.Equal("0.0014", Text(GeoFormat.FixedPoint4(0.00135, Buffer), Buffer));
        Assert.Equal("0.0001", Text(GeoFormat.FixedPoint4(6.0642951598391699e-05, Buffer), Buffer));   // util.c's own test
        Assert.Equal("12345678.9000", Text(GeoFormat.FixedPoint4(12345678.9, Buffer), Buffer));
        Assert.Equal("-3.1416", Text(GeoFormat.FixedPoint4(-Math.PI, Buffer), Buffer));

        // %.17Lf of the exact binary value, then trimmed: 2^-18 has 18 decimals and a tie at the 17th, rounded to even.
        Assert.Equal("0.00000381469726562", Text(GeoFormat.Coordinate(1.0 / (1 << 18), Buffer), Buffer));
        Assert.Equal("0.10000000000000001", Text(GeoFormat.Coordinate(0.1, Buffer), Buffer));
        Assert.Equal("-179.99999731779098511", Text(GeoFormat.Coordinate(-179.99999731779098511, Buffer), Buffer));
        Assert.Equal("12.5", Text(GeoFormat.Coordinate(12.5, Buffer), Buffer));
        var random = new Random(11);
        for (int i = 0; i < 20_000; i++)
        {
            double value = (random.NextDouble() - 0.5) * 360;
            string expected = value.ToString("F17", System.Globalization.CultureInfo.InvariantCulture).TrimEnd('0').TrimEnd('.');
            Assert.Equal(expected == "-0" ? "0" : expected, Text(GeoFormat.Coordinate(value, Buffer), Buffer));
        }
    }

    [Fact]
    public void UnitsParseInAnyCase()
    {
        foreach (var (text, factor) in new[] { ("m", 1.0), ("M", 1.0), ("km", 1000.0), ("KM", 1000.0), ("kM", 1000.0), ("ft", 0.3048), ("FT", 0.3048), ("mi", 1609.34), ("Mi", 1609.34) })
        {
            Assert.True(GeoUnits.TryParse(Encoding.ASCII.GetBytes(text), out double parsed), text);
            Assert.Equal(factor, parsed);
        }
        // redis-cli -p 7391 GEODIST k zero lonmax yd  -> ERR unsupported unit provided. please use M, KM, FT, MI
        foreach (string text in new[] { "", "yd", "mm", "k", "kms", "m ", "\u00b5m", "m\0" })
            Assert.False(GeoUnits.TryParse(Encoding.UTF8.GetBytes(text), out _), text);
        Assert.Equal("ERR unsupported unit provided. please use M, KM, FT, MI", GeoErrors.UnsupportedUnit);
    }

    [Fact]
    public void NeighboursWrapAroundTheGridAsRedisBitTricksDo()
    {
        // Redis's geohash_move_x/y add 1 to one interleaved coordinate with carries through the other's bits.
        var random = new Random(5);
        for (int i = 0; i < 10_000; i++)
        {
            int step = random.Next(1, 27);
            ulong bits = (ulong)random.NextInt64() & ((1UL << (2 * step)) - 1);
            foreach (var (east, north) in new[] { (1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, 1), (1, -1), (-1, -1) })
                Assert.Equal(RedisMove(bits, step, east, north), GeoHash.Neighbour(bits, step, east, north));
        }

        static ulong RedisMove(ulong bits, int step, int dx, int dy)
        {
            if (dx != 0)
            {
                ulong x = bits & 0xaaaaaaaaaaaaaaaaUL, y = bits & 0x5555555555555555UL;
                ulong zz = 0x5555555555555555UL >> (64 - step * 2);
                x = dx > 0 ? x + (zz + 1) : (x | zz) - (zz + 1);
                x &= 0xaaaaaaaaaaaaaaaaUL >> (64 - step * 2);
                bits = x | y;
            }
            if (dy != 0)
            {
                ulong x = bits & 0xaaaaaaaaaaaaaaaaUL, y = bits & 0x5555555555555555UL;
                ulong zz = 0xaaaaaaaaaaaaaaaaUL >> (64 - step * 2);
                y = dy > 0 ? y + (zz + 1) : (y | zz) - (zz + 1);
                y &= 0x5555555555555555UL >> (64 - step * 2);
                bits = x | y;
            }
            return bits;
        }
    }

    [Fact]
    public void SortOrderDefaultsAsRedis()
    {
        Assert.Equal(GeoOrder.Ascending, GeoSort.Effective(GeoOrder.None, 5, any: false));
        Assert.Equal(GeoOrder.None, GeoSort.Effective(GeoOrder.None, 5, any: true));
        Assert.Equal(GeoOrder.None, GeoSort.Effective(GeoOrder.None, 0, any: false));
        Assert.Equal(GeoOrder.Descending, GeoSort.Effective(GeoOrder.Descending, 5, any: false));
        Assert.Equal(3, GeoSort.Returned(3, 5));
        Assert.Equal(5, GeoSort.Returned(30, 5));
        Assert.Equal(30, GeoSort.Returned(30, 0));

        // NaN distances compare as "less" both ways (sort_gp_asc); the sorts must cope, as Redis's do.
        var matches = new GeoMatch[100];
        var random = new Random(3);
        for (int i = 0; i < matches.Length; i++)
            matches[i] = new GeoMatch(i, 0, 0, random.Next(4) == 0 ? double.NaN : random.Next(10), i);
        GeoSort.Sort(matches, GeoOrder.Ascending, 0);
        GeoSort.Sort(matches, GeoOrder.Descending, 7);
        Assert.Equal(Enumerable.Range(0, 100), matches.Select(m => m.Member).Order());
    }

    [Fact]
    public void SearchPathAndRepliesDoNotAllocate()
    {
        var matches = new GeoMatch[100];
        var shape = GeoShape.ByBox(2.35, 48.85, 500, 300, GeoUnits.Kilometres);
        double checksum = Work(shape, matches);   // first calls: JIT, statics, the pool's first array
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 200; i++)
            checksum += Work(shape, matches);
        Assert.Equal(before, GC.GetAllocatedBytesForCurrentThread());
        Assert.True(checksum != 0);

        static double Work(in GeoShape shape, GeoMatch[] matches)
        {
            Span<GeoScoreRange> ranges = stackalloc GeoScoreRange[GeoSearch.MaxAreas];
            Span<byte> text = stackalloc byte[GeoFormat.MaxCoordinateLength];
            double sum = 0;
            int count = GeoSearch.Areas(shape, ranges);
            for (int i = 0; i < matches.Length; i++)
            {
                double score = ranges[i % count].Min + i;
                GeoSearch.ContainsScore(shape, score, out double lon, out double lat, out double distance);
                matches[i] = new GeoMatch(score, lon, lat, distance, i);
                sum += GeoFormat.Distance(distance, shape.MetresPerUnit, text) + GeoFormat.Coordinate(lon, text) + GeoFormat.Coordinate(lat, text);
                GeoHash.WriteBase32(GeoHash.FromScore(score), text);
                sum += GeoHash.TryEncode(lon, lat, out ulong bits) ? bits : 0;
            }
            GeoSort.Sort(matches.AsSpan(0, 20), GeoOrder.Ascending, 0);
            GeoSort.Sort(matches, GeoOrder.Descending, 0);
            GeoSort.Sort(matches, GeoOrder.Ascending, 10);
            return sum + matches[0].DistanceMeters;
        }
    }

    // ---------------------------------------------------------------- helpers

    private static readonly byte[] Buffer = new byte[GeoFormat.MaxHumanDoubleLength];

    private static string Text(int length, ReadOnlySpan<byte> buffer) => Encoding.ASCII.GetString(buffer[..length]);

    private static void AssertPosition(string name, ulong bits, string longitude, string latitude, string hash)
    {
        GeoHash.Decode(bits, out double lon, out double lat);
        Assert.True(longitude == Text(GeoFormat.Coordinate(lon, Buffer), Buffer), $"{name} longitude");
        Assert.True(latitude == Text(GeoFormat.Coordinate(lat, Buffer), Buffer), $"{name} latitude");
        GeoHash.WriteBase32(bits, Buffer);
        Assert.Equal(hash, Text(GeoHash.Base32Length, Buffer));
    }

    private static double Number(string text)
    {
        Assert.True(NumberFormat.TryParseDouble(Encoding.ASCII.GetBytes(text), out double value), text);
        return value;
    }

    /// <summary>"FROMLONLAT lon lat BYRADIUS r unit" or "FROMMEMBER name BYBOX w h unit", as GEOSEARCH takes them.</summary>
    private static GeoShape ParseShape(string arguments, GeoSet set)
    {
        string[] words = arguments.Split(' ');
        double lon, lat;
        int i;
        if (words[0] == "FROMMEMBER")
        {
            GeoHash.Decode(GeoHash.FromScore(set.ScoreOf(words[1])), out lon, out lat);
            i = 2;
        }
        else
        {
            (lon, lat) = (Number(words[1]), Number(words[2]));
            Assert.True(GeoHash.IsValid(lon, lat));
            i = 3;
        }
        double unit;
        if (words[i] == "BYRADIUS")
        {
            Assert.True(GeoUnits.TryParse(Encoding.ASCII.GetBytes(words[i + 2]), out unit));
            return GeoShape.ByRadius(lon, lat, Number(words[i + 1]), unit);
        }
        Assert.Equal("BYBOX", words[i]);
        Assert.True(GeoUnits.TryParse(Encoding.ASCII.GetBytes(words[i + 3]), out unit));
        return GeoShape.ByBox(lon, lat, Number(words[i + 1]), Number(words[i + 2]), unit);
    }

    private static void ParseOptions(string options, out GeoOrder order, out long count, out bool any)
    {
        (order, count, any) = (GeoOrder.None, 0, false);
        string[] words = options.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        for (int i = 0; i < words.Length; i++)
        {
            switch (words[i])
            {
                case "ASC": order = GeoOrder.Ascending; break;
                case "DESC": order = GeoOrder.Descending; break;
                case "ANY": any = true; break;
                case "COUNT": count = long.Parse(words[++i]); break;
                default: throw new ArgumentException(options);
            }
        }
    }

    /// <summary>A whole GEOSEARCH as the command will run it: scan (stopping early for ANY), sort, cut to COUNT.</summary>
    private static string[] RunSearch(GeoSet set, GeoShape shape, GeoOrder order, long count, bool any)
    {
        var found = set.Search(shape, limit: any ? count : 0);
        var matches = found.Select(f => f.Match).ToArray();
        GeoSort.Sort(matches, GeoSort.Effective(order, count, any), count);
        return matches.Take(GeoSort.Returned(matches.Length, count)).Select(m => found[m.Member].Member).ToArray();
    }

    /// <summary>A sorted set's order over (score, member), and the scan a search makes over it.</summary>
    private sealed class GeoSet
    {
        private readonly (double Score, string Member)[] _entries;
        private readonly Dictionary<string, double> _scores = new();

        public GeoSet(IEnumerable<(string Member, double Score)> members)
        {
            foreach (var (member, score) in members)
                _scores[member] = score;
            _entries = _scores.Select(p => (p.Value, p.Key)).ToArray();
            Array.Sort(_entries, (a, b) => a.Score != b.Score ? a.Score.CompareTo(b.Score) : string.CompareOrdinal(a.Member, b.Member));
        }

        public double ScoreOf(string member) => _scores[member];

        /// <summary>
        /// The members kept, in scan order, each with its match (Member = its index in the list).
        /// A limit (ANY's COUNT) stops the scan once that many are kept, as geoGetPointsInRange and
        /// membersOfAllNeighbors check it.
        /// </summary>
        public List<(string Member, GeoMatch Match)> Search(in GeoShape shape, long limit)
        {
            Span<GeoScoreRange> ranges = stackalloc GeoScoreRange[GeoSearch.MaxAreas];
            int count = GeoSearch.Areas(shape, ranges);
            var found = new List<(string, GeoMatch)>();
            for (int r = 0; r < count; r++)
            {
                if (found.Count > 0 && limit > 0 && found.Count >= limit)
                    break;
                var range = ranges[r];
                int i = FirstAtLeast(range.Min);
                for (; i < _entries.Length && range.Contains(_entries[i].Score); i++)
                {
                    var (score, member) = _entries[i];
                    if (GeoSearch.ContainsScore(shape, score, out double lon, out double lat, out double distance))
                        found.Add((member, new GeoMatch(score, lon, lat, distance, found.Count)));
                    if (found.Count > 0 && limit > 0 && found.Count >= limit)
                        break;
                }
            }
            return found;
        }

        private int FirstAtLeast(double score)
        {
            int low = 0, high = _entries.Length;
            while (low < high)
            {
                int mid = (low + high) / 2;
                if (_entries[mid].Score < score)
                    low = mid + 1;
                else
                    high = mid;
            }
            return low;
        }
    }

    private sealed record RandomVectors(
        List<(string Name, double Longitude, double Latitude, double Score, string GeoPosLongitude, string GeoPosLatitude, string GeoHash)> Points,
        List<(string Arguments, List<(string Member, string Distance, double Stored)> Hits, string? Order, string[] Ordered)> Searches);

    private static readonly Lazy<RandomVectors> RandomSet = new(() =>
    {
        var vectors = new RandomVectors([], []);
        foreach (string line in RandomVectorsText.Split('\n'))
        {
            string[] words = line.TrimEnd().Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (words.Length == 0)
                continue;
            switch (words[0])
            {
                case "P":
                    vectors.Points.Add((words[1], Number(words[2]), Number(words[3]), Number(words[4]), words[5], words[6], words[7]));
                    break;
                case "S":
                    vectors.Searches.Add((string.Join(' ', words[1..]), [], null, []));
                    break;
                case "R":
                    vectors.Searches[^1].Hits.AddRange(words[1..].Select(w => w.Split(':')).Select(f => (f[0], f[1], Number(f[2]))));
                    break;
                case "O":
                    int bar = Array.IndexOf(words, "|");
                    vectors.Searches[^1] = vectors.Searches[^1] with { Order = string.Join(' ', words[1..bar]), Ordered = words[(bar + 1)..] };
                    break;
                default:
                    throw new InvalidDataException(line);
            }
        }
        return vectors;
    });
}
