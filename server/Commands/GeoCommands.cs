using System.Buffers;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.DataTypes.Geo;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// The geo commands over a sorted set whose scores are 52-bit geohashes (the core is in
/// <see cref="DataTypes.Geo"/>): GEOADD, GEODIST, GEOHASH, GEOPOS, GEOSEARCH, GEOSEARCHSTORE and the
/// GEORADIUS family, with Redis 7.0's argument walk, order of checks, errors and reply shapes
/// (geo.c's georadiusGeneric). Keywords compare as C strings (strcasecmp stops at a NUL byte), as
/// in Redis. A search scans the score ranges of <see cref="GeoSearch.Areas"/> in the sorted set's
/// order, so members, ties and COUNT/ANY cuts come out as Redis's; the read paths allocate nothing
/// (matches in pooled buffers, replies formatted on the stack). GEOADD is logged as the ZADD Redis
/// turns it into, the STORE forms as their effect (DEL and ZADD of the stored scores), so a replay
/// never searches.
/// </summary>
public static unsafe class GeoCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "geo";
        const string radiusComplexity = "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.";
        const string searchComplexity = "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape";
        CommandArgument key = new("key", "key");
        CommandArgument unit = new("unit", "oneof", Children: [
            new("m", "pure-token", Token: "M"), new("km", "pure-token", Token: "KM"),
            new("ft", "pure-token", Token: "FT"), new("mi", "pure-token", Token: "MI")]);
        CommandArgument withCoord = new("withcoord", "pure-token", Optional: true, Token: "WITHCOORD");
        CommandArgument withDist = new("withdist", "pure-token", Optional: true, Token: "WITHDIST");
        CommandArgument withHash = new("withhash", "pure-token", Optional: true, Token: "WITHHASH");
        CommandArgument count = new("count", "block", Optional: true, Children: [
            new("count", "integer", Token: "COUNT"), new("any", "pure-token", Optional: true, Token: "ANY")]);
        CommandArgument order = new("order", "oneof", Optional: true, Children: [
            new("asc", "pure-token", Token: "ASC"), new("desc", "pure-token", Token: "DESC")]);
        CommandArgument store = new("key", "key", Optional: true, Token: "STORE");
        CommandArgument storeDist = new("key", "key", Optional: true, Token: "STOREDIST");
        CommandArgument from = new("from", "oneof", Children: [
            new("member", "string", Token: "FROMMEMBER"),
            new("longitude_latitude", "block", Token: "FROMLONLAT", Children: [new("longitude", "double"), new("latitude", "double")])]);
        CommandArgument by = new("by", "oneof", Children: [
            new("circle", "block", Children: [new("radius", "double", Token: "BYRADIUS"), unit]),
            new("box", "block", Children: [new("width", "double", Token: "BYBOX"), new("height", "double"), unit])]);
        CommandArgument[] aroundPoint = [key, new("longitude", "double"), new("latitude", "double"), new("radius", "double"), unit];
        CommandArgument[] aroundMember = [key, new("member", "string"), new("radius", "double"), unit];

        table.Add(new CommandSpec("geoadd", -5, Write | DenyOom, 1, 1, 1, GeoAdd, g,
            "Add one or more geospatial items in the geospatial index represented using a sorted set", "3.2.0",
            "O(log(N)) for each item added, where N is the number of elements in the sorted set.")
        {
            Arguments = [key,
                new("condition", "oneof", Optional: true, Children: [new("nx", "pure-token", Token: "NX"), new("xx", "pure-token", Token: "XX")]),
                new("change", "pure-token", Optional: true, Token: "CH"),
                new("longitude_latitude_member", "block", Multiple: true, Children: [
                    new("longitude", "double"), new("latitude", "double"), new("member", "string")])],
        });
        table.Add(new CommandSpec("geodist", -4, ReadOnly, 1, 1, 1, GeoDist, g,
            "Returns the distance between two members of a geospatial index", "3.2.0", "O(log(N))")
        {
            Arguments = [key, new("member1", "string"), new("member2", "string"),
                new("unit", "oneof", Optional: true, Children: unit.Children)],
        });
        table.Add(new CommandSpec("geohash", -2, ReadOnly, 1, 1, 1, GeoHashCommand, g,
            "Returns members of a geospatial index as standard geohash strings", "3.2.0",
            "O(log(N)) for each member requested, where N is the number of elements in the sorted set.")
        { Arguments = [key, new("member", "string", Multiple: true)] });
        table.Add(new CommandSpec("geopos", -2, ReadOnly, 1, 1, 1, GeoPos, g,
            "Returns longitude and latitude of members of a geospatial index", "3.2.0",
            "O(N) where N is the number of members requested.")
        { Arguments = [key, new("member", "string", Multiple: true)] });
        table.Add(new CommandSpec("georadius", -6, Write | DenyOom, 1, 1, 1, GeoRadius, g,
            "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point", "3.2.0", radiusComplexity)
        {
            StoreKey = args => StoreKeyOf(args, RadiusBaseArgs),
            Arguments = [.. aroundPoint, withCoord, withDist, withHash, count, order, store, storeDist],
        });
        table.Add(new CommandSpec("georadius_ro", -6, ReadOnly, 1, 1, 1, GeoRadiusReadOnly, g,
            "A read-only variant for GEORADIUS", "3.2.10", radiusComplexity)
        { Arguments = [.. aroundPoint, withCoord, withDist, withHash, count, order] });
        table.Add(new CommandSpec("georadiusbymember", -5, Write | DenyOom, 1, 1, 1, GeoRadiusByMember, g,
            "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member", "3.2.0", radiusComplexity)
        {
            StoreKey = args => StoreKeyOf(args, ByMemberBaseArgs),
            Arguments = [.. aroundMember, withCoord, withDist, withHash, count, order, store, storeDist],
        });
        table.Add(new CommandSpec("georadiusbymember_ro", -5, ReadOnly, 1, 1, 1, GeoRadiusByMemberReadOnly, g,
            "A read-only variant for GEORADIUSBYMEMBER", "3.2.10", radiusComplexity)
        { Arguments = [.. aroundMember, withCoord, withDist, withHash, count, order] });
        table.Add(new CommandSpec("geosearch", -7, ReadOnly, 1, 1, 1, GeoSearchCommand, g,
            "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.", "6.2.0", searchComplexity)
        { Arguments = [key, from, by, order, count, withCoord, withDist, withHash] });
        table.Add(new CommandSpec("geosearchstore", -8, Write | DenyOom, 1, 2, 1, GeoSearchStore, g,
            "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.", "6.2.0", searchComplexity)
        {
            WrittenKey = 1,
            Arguments = [new("destination", "key"), new("source", "key"), from, by, order, count,
                new("storedist", "pure-token", Optional: true, Token: "STOREDIST")],
        });
    }

    // ---- argument helpers ----------------------------------------------------------------

    /// <summary>The argument as C sees it: up to its first NUL byte (Redis compares keywords with strcasecmp).</summary>
    private static ReadOnlySpan<byte> CString(ReadOnlySpan<byte> argument)
    {
        int nul = argument.IndexOf((byte)0);
        return nul < 0 ? argument : argument[..nul];
    }

    /// <summary>strcasecmp(argument, keyword) == 0.</summary>
    private static bool Is(ReadOnlySpan<byte> argument, ReadOnlySpan<byte> lowerKeyword)
        => NumberFormat.EqualsIgnoreCase(CString(argument), lowerKeyword);

    /// <summary>
    /// A number as Redis's getDoubleFromObject reads it (string2d): the whole argument, no leading
    /// space, not NaN, and not out of a double's range (strtod's ERANGE: "1e400", or "1e-400" that
    /// underflows to zero); "inf" and "-inf" are accepted. A NUL byte ends strtod's number before
    /// the argument's end, so it is refused (.NET's parser would skip trailing NULs).
    /// </summary>
    private static bool TryParseNumber(ReadOnlySpan<byte> text, out double value)
    {
        value = 0;
        if (text.IndexOf((byte)0) >= 0 || !NumberFormat.TryParseDouble(text, out value))
            return false;
        if (double.IsInfinity(value))
            return IsInfinityLiteral(text);
        return value != 0 || !HasNonZeroMantissa(text);
    }

    private static bool IsInfinityLiteral(ReadOnlySpan<byte> text)
    {
        if (text.Length > 0 && text[0] is (byte)'+' or (byte)'-')
            text = text[1..];
        return NumberFormat.EqualsIgnoreCase(text, "inf"u8) || NumberFormat.EqualsIgnoreCase(text, "infinity"u8);
    }

    private static bool HasNonZeroMantissa(ReadOnlySpan<byte> text)
    {
        foreach (byte b in text)
        {
            if (b is (byte)'e' or (byte)'E')
                return false;
            if (b is >= (byte)'1' and <= (byte)'9')
                return true;
        }
        return false;
    }

    /// <summary>
    /// extractLongLatOrReply: two numbers from <paramref name="index"/> ("ERR value is not a valid
    /// float" for the first that is not one), then the WGS84 limits with the pair printed by "%f".
    /// </summary>
    private static bool TryLongitudeLatitude(ref CommandContext c, int index, out double longitude, out double latitude)
    {
        latitude = 0;
        if (!TryParseNumber(c.Arg(index), out longitude) || !TryParseNumber(c.Arg(index + 1), out latitude))
        {
            c.Error(GeoErrors.NotFloat);
            return false;
        }
        if (!GeoHash.IsValid(longitude, latitude))
        {
            c.Error(GeoErrors.InvalidLongitudeLatitude(longitude, latitude));
            return false;
        }
        return true;
    }

    /// <summary>extractUnitOrReply: m, km, ft or mi in any case.</summary>
    private static bool TryUnit(ref CommandContext c, int index, out double metresPerUnit)
    {
        if (GeoUnits.TryParse(CString(c.Arg(index)), out metresPerUnit))
            return true;
        c.Error(GeoErrors.UnsupportedUnit);
        return false;
    }

    /// <summary>extractDistanceOrReply: radius (numeric, not negative), then its unit.</summary>
    private static bool TryRadius(ref CommandContext c, int index, out double radius, out double metresPerUnit)
    {
        metresPerUnit = 0;
        if (!TryParseNumber(c.Arg(index), out radius))
        {
            c.Error(GeoErrors.NeedNumericRadius);
            return false;
        }
        if (radius < 0)
        {
            c.Error(GeoErrors.NegativeRadius);
            return false;
        }
        return TryUnit(ref c, index + 1, out metresPerUnit);
    }

    /// <summary>extractBoxOrReply: width, height (numeric, neither negative), then the unit.</summary>
    private static bool TryBox(ref CommandContext c, int index, out double width, out double height, out double metresPerUnit)
    {
        height = metresPerUnit = 0;
        if (!TryParseNumber(c.Arg(index), out width))
        {
            c.Error(GeoErrors.NeedNumericWidth);
            return false;
        }
        if (!TryParseNumber(c.Arg(index + 1), out height))
        {
            c.Error(GeoErrors.NeedNumericHeight);
            return false;
        }
        if (height < 0 || width < 0)
        {
            c.Error(GeoErrors.NegativeBox);
            return false;
        }
        return TryUnit(ref c, index + 2, out metresPerUnit);
    }

    /// <summary>longLatFromMember: the decoded position of a member's score; false when it is not in the set.</summary>
    private static bool TryMemberPosition(in SortedSetView set, ReadOnlySpan<byte> member, out double longitude, out double latitude)
    {
        longitude = latitude = 0;
        if (!set.TryGetScore(member, out double score))
            return false;
        GeoHash.Decode(GeoHash.FromScore(score), out longitude, out latitude);
        return true;
    }

    /// <summary>A coordinate as addReplyHumanLongDouble sends it: a bulk string in RESP2, a double (",text") in RESP3.</summary>
    private static void ReplyCoordinate(RespWriter reply, double degrees)
    {
        Span<byte> line = stackalloc byte[GeoFormat.MaxHumanDoubleLength + 3];
        if (reply.Protocol == 3)
        {
            line[0] = (byte)',';
            int n = 1 + GeoFormat.Coordinate(degrees, line[1..]);
            line[n++] = (byte)'\r';
            line[n++] = (byte)'\n';
            reply.WriteRaw(line[..n]);
        }
        else
        {
            reply.Bulk(line[..GeoFormat.Coordinate(degrees, line)]);
        }
    }

    /// <summary>A distance as addReplyDoubleDistance sends it: a bulk string with 4 decimals.</summary>
    private static void ReplyDistance(RespWriter reply, double distanceInUnit)
    {
        Span<byte> text = stackalloc byte[GeoFormat.MaxDistanceLength];
        reply.Bulk(text[..GeoFormat.FixedPoint4(distanceInUnit, text)]);
    }

    // ---- GEOADD ------------------------------------------------------------------------------

    /// <summary>
    /// GEOADD key [NX|XX] [CH] longitude latitude member [...]: every position is checked before
    /// anything changes, then the members are added as ZADD adds them (Redis hands the call to
    /// zaddCommand with the geohashes as scores): "zadd" is published, and the write is logged as
    /// that ZADD, so a replay gives the same scores without encoding again.
    /// </summary>
    private static void GeoAdd(ref CommandContext c)
    {
        bool nx = false, xx = false;
        int first = 2;
        for (; first < c.ArgCount; first++)
        {
            ReadOnlySpan<byte> option = c.Arg(first);
            if (Is(option, "nx"u8)) nx = true;
            else if (Is(option, "xx"u8)) xx = true;
            else if (!Is(option, "ch"u8)) break;
        }
        bool ch = false;
        for (int i = 2; i < first; i++)
            ch |= Is(c.Arg(i), "ch"u8);
        int remaining = c.ArgCount - first;
        // No element at all ("GEOADD k CH NX"): ZADD's own syntax error, the same text.
        if (remaining % 3 != 0 || (xx && nx) || remaining == 0)
        {
            c.SyntaxError();
            return;
        }
        int elements = remaining / 3;
        for (int i = 0; i < elements; i++)
            if (!TryLongitudeLatitude(ref c, first + 3 * i, out _, out _))
                return;

        Entry* e = SortedSetCommands.WriteOrCreate(ref c, c.Arg(1), create: !xx, c.Arg(first + 2).Length, out bool failed);
        if (e == null)
        {
            if (!failed)
                c.Reply.Integer(0);
            return;
        }
        var limits = SortedSetLimits.From(c.Server.Config);
        var flags = nx ? SortedSetAddFlags.Nx : xx ? SortedSetAddFlags.Xx : SortedSetAddFlags.None;
        long added = 0, changed = 0;
        for (int i = 0; i < elements; i++)
        {
            double score = GeoHash.ToScore(Encode(ref c, first + 3 * i));
            var result = SortedSets.Add(e, score, c.Arg(first + 3 * i + 2), flags, limits, out _);
            if (result == SortedSetAddResult.Added)
                added++;
            else if (result == SortedSetAddResult.Updated)
                changed++;
        }
        if (added + changed == 0)
        {
            c.LogNothing();
        }
        else
        {
            TypedKeys.Notify(ref c, KeyspaceEventTypes.SortedSet, "zadd"u8, c.Arg(1));
            LogAsZAdd(ref c, first, elements, nx, xx);
        }
        TypedKeys.DeleteIfEmpty(ref c, c.Arg(1), e);
        c.Reply.Integer(ch ? added + changed : added);
    }

    /// <summary>The geohash of the (already checked) position at <paramref name="index"/>.</summary>
    private static ulong Encode(ref CommandContext c, int index)
    {
        TryParseNumber(c.Arg(index), out double longitude);
        TryParseNumber(c.Arg(index + 1), out double latitude);
        GeoHash.TryEncode(longitude, latitude, out ulong bits);
        return bits;
    }

    /// <summary>ZADD key [NX|XX] score member ...: the call GEOADD becomes, with the scores as integers (as Redis prints them).</summary>
    private static void LogAsZAdd(ref CommandContext c, int first, int elements, bool nx, bool xx)
    {
        bool condition = nx || xx;
        if (c.LogAs(2 + (condition ? 1 : 0) + 2 * elements) is not { } log)
            return;
        log.Argument("ZADD"u8);
        log.Argument(c.Arg(1));
        if (condition)
            log.Argument(nx ? "NX"u8 : "XX"u8);
        for (int i = 0; i < elements; i++)
        {
            log.Argument((long)Encode(ref c, first + 3 * i));
            log.Argument(c.Arg(first + 3 * i + 2));
        }
        log.EndCommand();
    }

    // ---- GEODIST, GEOHASH, GEOPOS ------------------------------------------------------------

    /// <summary>GEODIST key member1 member2 [unit]: the unit is checked before the key; null when the key or a member is missing.</summary>
    private static void GeoDist(ref CommandContext c)
    {
        double metresPerUnit = GeoUnits.Metres;
        if (c.ArgCount == 5)
        {
            if (!TryUnit(ref c, 4, out metresPerUnit))
                return;
        }
        else if (c.ArgCount > 5)
        {
            c.SyntaxError();
            return;
        }
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.SortedSet, out bool failed);
        if (failed)
            return;
        var set = SortedSetView.Of(e);
        if (!set.Exists
            || !TryMemberPosition(set, c.Arg(2), out double longitude1, out double latitude1)
            || !TryMemberPosition(set, c.Arg(3), out double longitude2, out double latitude2))
        {
            c.Reply.Null();
            return;
        }
        ReplyDistance(c.Reply, GeoHash.Distance(longitude1, latitude1, longitude2, latitude2) / metresPerUnit);
    }

    /// <summary>GEOHASH key [member ...]: an 11-character standard geohash per member, null for a missing one.</summary>
    private static void GeoHashCommand(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.SortedSet, out bool failed);
        if (failed)
            return;
        var set = SortedSetView.Of(e);
        Span<byte> text = stackalloc byte[GeoHash.Base32Length];
        c.Reply.ArrayHeader(c.ArgCount - 2);
        for (int i = 2; i < c.ArgCount; i++)
        {
            if (!set.TryGetScore(c.Arg(i), out double score))
            {
                c.Reply.Null();
                continue;
            }
            GeoHash.WriteBase32(GeoHash.FromScore(score), text);
            c.Reply.Bulk(text);
        }
    }

    /// <summary>GEOPOS key [member ...]: [longitude, latitude] per member, a null array for a missing one.</summary>
    private static void GeoPos(ref CommandContext c)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.SortedSet, out bool failed);
        if (failed)
            return;
        var set = SortedSetView.Of(e);
        c.Reply.ArrayHeader(c.ArgCount - 2);
        for (int i = 2; i < c.ArgCount; i++)
        {
            if (!set.Exists || !TryMemberPosition(set, c.Arg(i), out double longitude, out double latitude))
            {
                c.Reply.NullArray();
                continue;
            }
            c.Reply.ArrayHeader(2);
            ReplyCoordinate(c.Reply, longitude);
            ReplyCoordinate(c.Reply, latitude);
        }
    }

    // ---- searches ----------------------------------------------------------------------------

    /// <summary>Which command is searching (geo.c's RADIUS_* and GEOSEARCH* flags).</summary>
    [Flags]
    private enum SearchFlags
    {
        None = 0,
        /// <summary>GEORADIUS: longitude latitude radius unit after the key.</summary>
        Coordinates = 1,
        /// <summary>GEORADIUSBYMEMBER: member radius unit after the key.</summary>
        Member = 2,
        /// <summary>The _RO forms: no STORE or STOREDIST.</summary>
        NoStore = 4,
        /// <summary>GEOSEARCH: FROMMEMBER/FROMLONLAT and BYRADIUS/BYBOX options.</summary>
        Search = 8,
        /// <summary>GEOSEARCHSTORE: the destination first, STOREDIST without a key.</summary>
        SearchStore = 16,
    }

    private const int RadiusBaseArgs = 6;
    private const int ByMemberBaseArgs = 5;

    private static void GeoRadius(ref CommandContext c) => Search(ref c, 1, SearchFlags.Coordinates);
    private static void GeoRadiusReadOnly(ref CommandContext c) => Search(ref c, 1, SearchFlags.Coordinates | SearchFlags.NoStore);
    private static void GeoRadiusByMember(ref CommandContext c) => Search(ref c, 1, SearchFlags.Member);
    private static void GeoRadiusByMemberReadOnly(ref CommandContext c) => Search(ref c, 1, SearchFlags.Member | SearchFlags.NoStore);
    private static void GeoSearchCommand(ref CommandContext c) => Search(ref c, 1, SearchFlags.Search);
    private static void GeoSearchStore(ref CommandContext c) => Search(ref c, 2, SearchFlags.Search | SearchFlags.SearchStore);

    /// <summary>
    /// The destination GEORADIUS or GEORADIUSBYMEMBER names with STORE or STOREDIST (the last one
    /// wins), found as the handler's walk finds it, for routing; 0 when there is none or the walk
    /// would stop at a syntax error (then nothing is written).
    /// </summary>
    private static int StoreKeyOf(ArgList args, int baseArgs)
    {
        int store = 0;
        int remaining = args.Count - baseArgs;
        for (int i = 0; i < remaining; i++)
        {
            ReadOnlySpan<byte> arg = args[baseArgs + i];
            if (Is(arg, "withdist"u8) || Is(arg, "withhash"u8) || Is(arg, "withcoord"u8) || Is(arg, "any"u8) || Is(arg, "asc"u8) || Is(arg, "desc"u8))
                continue;
            if (Is(arg, "count"u8) && i + 1 < remaining)
                i++;
            else if ((Is(arg, "store"u8) || Is(arg, "storedist"u8)) && i + 1 < remaining)
                store = baseArgs + ++i;
            else
                return 0;
        }
        return store;
    }

    /// <summary>What a search asked for once its arguments are walked.</summary>
    private struct SearchOptions
    {
        public bool WithDist, WithHash, WithCoord, Any, StoreDist;
        public bool FromMember, FromLonLat, ByRadius, ByBox;
        public GeoOrder Order;
        public long Count;
        /// <summary>The destination's argument index, 0 for a plain search.</summary>
        public int Store;
        public double Longitude, Latitude, Radius, Width, Height, MetresPerUnit;
    }

    /// <summary>
    /// georadiusGeneric: the source is looked up first (WRONGTYPE before anything else), then the
    /// centre and radius of the GEORADIUS forms (except GEORADIUSBYMEMBER on a missing key, which
    /// only walks its options), then the options in order, each checked as it comes; then STORE
    /// against WITH*, FROM and BY missing, ANY without COUNT; then a missing source answers an
    /// empty reply (deleting a STORE destination). Otherwise the areas are scanned, sorted, and the
    /// matches replied or stored.
    /// </summary>
    private static void Search(ref CommandContext c, int source, SearchFlags flags)
    {
        Entry* e = TypedKeys.Read(ref c, c.Arg(source), Engine.ValueType.SortedSet, out bool failed);
        if (failed)
            return;
        var set = SortedSetView.Of(e);

        var o = new SearchOptions();
        int baseArgs;
        if ((flags & SearchFlags.Coordinates) != 0)
        {
            baseArgs = RadiusBaseArgs;
            if (!TryLongitudeLatitude(ref c, 2, out o.Longitude, out o.Latitude) || !TryRadius(ref c, 4, out o.Radius, out o.MetresPerUnit))
                return;
            o.ByRadius = true;
        }
        else if ((flags & SearchFlags.Member) != 0)
        {
            baseArgs = ByMemberBaseArgs;
            if (set.Exists)
            {
                if (!TryMemberPosition(set, c.Arg(2), out o.Longitude, out o.Latitude))
                {
                    c.Error(GeoErrors.CouldNotDecodeMember);
                    return;
                }
                if (!TryRadius(ref c, 3, out o.Radius, out o.MetresPerUnit))
                    return;
                o.ByRadius = true;
            }
        }
        else
        {
            baseArgs = (flags & SearchFlags.SearchStore) != 0 ? 3 : 2;
            if ((flags & SearchFlags.SearchStore) != 0)
                o.Store = 1;
        }
        if (!TryOptions(ref c, set, flags, baseArgs, ref o))
            return;

        if (o.Store != 0 && (o.WithDist || o.WithHash || o.WithCoord))
        {
            c.Error((flags & SearchFlags.SearchStore) != 0 ? GeoErrors.GeoSearchStoreWithOptions : GeoErrors.GeoRadiusStoreWithOptions);
            return;
        }
        if ((flags & SearchFlags.Search) != 0 && !(o.FromMember || o.FromLonLat))
        {
            c.Error(GeoErrors.ExactlyOneFrom(c.ArgString(0)));
            return;
        }
        if ((flags & SearchFlags.Search) != 0 && !(o.ByRadius || o.ByBox))
        {
            c.Error(GeoErrors.ExactlyOneBy(c.ArgString(0)));
            return;
        }
        if (o.Any && o.Count == 0)
        {
            c.Error(GeoErrors.AnyWithoutCount);
            return;
        }

        if (!set.Exists)
        {
            if (o.Store != 0)
            {
                StoreNothing(ref c, c.Arg(o.Store));
                c.Reply.Integer(0);
            }
            else
            {
                c.LogNothing();
                c.Reply.ArrayHeader(0);
            }
            return;
        }

        GeoShape shape = o.ByBox
            ? GeoShape.ByBox(o.Longitude, o.Latitude, o.Width, o.Height, o.MetresPerUnit)
            : GeoShape.ByRadius(o.Longitude, o.Latitude, o.Radius, o.MetresPerUnit);
        var matches = new MatchBuffer(16);
        try
        {
            Scan(set, shape, o.Any ? o.Count : 0, ref matches);
            Span<GeoMatch> found = matches.Matches;
            GeoSort.Sort(found, GeoSort.Effective(o.Order, o.Count, o.Any), o.Count);
            int returned = GeoSort.Returned(found.Length, o.Count);
            if (o.Store == 0)
            {
                c.LogNothing();
                ReplyMatches(c.Reply, set, found[..returned], matches.Nodes, o, shape.MetresPerUnit);
            }
            else
            {
                StoreMatches(ref c, set, c.Arg(o.Store), found[..returned], matches.Nodes, o.StoreDist, shape.MetresPerUnit, flags);
                c.Reply.Integer(returned);
            }
        }
        finally
        {
            matches.Dispose();
        }
    }

    /// <summary>The option walk of georadiusGeneric from <paramref name="baseArgs"/>; false after replying an error.</summary>
    private static bool TryOptions(ref CommandContext c, in SortedSetView set, SearchFlags flags, int baseArgs, ref SearchOptions o)
    {
        bool search = (flags & SearchFlags.Search) != 0;
        bool storeAllowed = (flags & (SearchFlags.NoStore | SearchFlags.Search)) == 0;
        int remaining = c.ArgCount - baseArgs;
        for (int i = 0; i < remaining; i++)
        {
            int at = baseArgs + i;
            ReadOnlySpan<byte> arg = c.Arg(at);
            if (Is(arg, "withdist"u8)) o.WithDist = true;
            else if (Is(arg, "withhash"u8)) o.WithHash = true;
            else if (Is(arg, "withcoord"u8)) o.WithCoord = true;
            else if (Is(arg, "any"u8)) o.Any = true;
            else if (Is(arg, "asc"u8)) o.Order = GeoOrder.Ascending;
            else if (Is(arg, "desc"u8)) o.Order = GeoOrder.Descending;
            else if (Is(arg, "count"u8) && i + 1 < remaining)
            {
                if (!c.TryInt64(at + 1, out o.Count, GeoErrors.NotInteger))
                    return false;
                if (o.Count <= 0)
                {
                    c.Error(GeoErrors.CountNotPositive);
                    return false;
                }
                i++;
            }
            else if (Is(arg, "store"u8) && i + 1 < remaining && storeAllowed)
            {
                o.Store = at + 1;
                o.StoreDist = false;
                i++;
            }
            else if (Is(arg, "storedist"u8) && i + 1 < remaining && storeAllowed)
            {
                o.Store = at + 1;
                o.StoreDist = true;
                i++;
            }
            else if (Is(arg, "storedist"u8) && (flags & SearchFlags.SearchStore) != 0)
                o.StoreDist = true;
            else if (Is(arg, "frommember"u8) && i + 1 < remaining && search && !o.FromLonLat)
            {
                // A missing source is reported once the walk is done: the member is not looked for.
                if (set.Exists && !TryMemberPosition(set, c.Arg(at + 1), out o.Longitude, out o.Latitude))
                {
                    c.Error(GeoErrors.CouldNotDecodeMember);
                    return false;
                }
                o.FromMember = true;
                i++;
            }
            else if (Is(arg, "fromlonlat"u8) && i + 2 < remaining && search && !o.FromMember)
            {
                if (!TryLongitudeLatitude(ref c, at + 1, out o.Longitude, out o.Latitude))
                    return false;
                o.FromLonLat = true;
                i += 2;
            }
            else if (Is(arg, "byradius"u8) && i + 2 < remaining && search && !o.ByBox)
            {
                if (!TryRadius(ref c, at + 1, out o.Radius, out o.MetresPerUnit))
                    return false;
                o.ByRadius = true;
                i += 2;
            }
            else if (Is(arg, "bybox"u8) && i + 3 < remaining && search && !o.ByRadius)
            {
                if (!TryBox(ref c, at + 1, out o.Width, out o.Height, out o.MetresPerUnit))
                    return false;
                o.ByBox = true;
                i += 3;
            }
            else
            {
                c.SyntaxError();
                return false;
            }
        }
        return true;
    }

    /// <summary>
    /// membersOfAllNeighbors: each area's scores in the set's order, keeping what the shape holds;
    /// with <paramref name="limit"/> (ANY's COUNT) the scan stops once that many are kept.
    /// </summary>
    private static void Scan(in SortedSetView set, in GeoShape shape, long limit, ref MatchBuffer matches)
    {
        Span<GeoScoreRange> areas = stackalloc GeoScoreRange[GeoSearch.MaxAreas];
        int count = GeoSearch.Areas(shape, areas);
        for (int a = 0; a < count; a++)
        {
            if (limit > 0 && matches.Count >= limit)
                return;
            ScoreRange range = areas[a].ToScoreRange();
            for (var at = set.FirstIn(range); !at.IsEnd && range.BelowMax(at); at = at.Next)
            {
                double score = at.Score;
                if (GeoSearch.ContainsScore(shape, score, out double longitude, out double latitude, out double distance))
                    matches.Add(new GeoMatch(score, longitude, latitude, distance, matches.Count), at.Position);
                if (limit > 0 && matches.Count >= limit)
                    return;
            }
        }
    }

    /// <summary>The reply of a search: members, or [member, dist?, hash?, [lon, lat]?] per member.</summary>
    private static void ReplyMatches(RespWriter reply, in SortedSetView set, ReadOnlySpan<GeoMatch> matches, ReadOnlySpan<nint> nodes, in SearchOptions o, double metresPerUnit)
    {
        Span<byte> scratch = stackalloc byte[SortedSetCursor.Scratch];
        int extras = (o.WithDist ? 1 : 0) + (o.WithHash ? 1 : 0) + (o.WithCoord ? 1 : 0);
        reply.ArrayHeader(matches.Length);
        foreach (ref readonly GeoMatch match in matches)
        {
            if (extras > 0)
                reply.ArrayHeader(extras + 1);
            reply.Bulk(set.At(nodes[match.Member]).Member(scratch));
            if (o.WithDist)
                ReplyDistance(reply, match.DistanceMeters / metresPerUnit);
            if (o.WithHash)
                reply.Integer(GeoHash.TruncateToInt64(match.Score));   // addReplyLongLong of the double score
            if (o.WithCoord)
            {
                reply.ArrayHeader(2);
                ReplyCoordinate(reply, match.Longitude);
                ReplyCoordinate(reply, match.Latitude);
            }
        }
    }

    /// <summary>
    /// STORE, STOREDIST and GEOSEARCHSTORE: the matches become the destination's sorted set (the
    /// geohash, or the distance in the unit, as scores), replacing whatever it held and its TTL;
    /// none deletes it. Publishes georadiusstore or geosearchstore (del when only deleted), and logs
    /// the effect: DEL and ZADD of the stored scores, so a replay never searches.
    /// </summary>
    private static void StoreMatches(ref CommandContext c, in SortedSetView set, ReadOnlySpan<byte> destination, ReadOnlySpan<GeoMatch> matches, ReadOnlySpan<nint> nodes,
        bool storeDist, double metresPerUnit, SearchFlags flags)
    {
        if (matches.IsEmpty)
        {
            StoreNothing(ref c, destination);
            return;
        }
        // Built before the destination is replaced: it may be the source itself.
        SortedSetValue* result = SortedSetValue.Create();
        Span<byte> scratch = stackalloc byte[SortedSetCursor.Scratch];
        foreach (ref readonly GeoMatch match in matches)
        {
            ReadOnlySpan<byte> member = set.At(nodes[match.Member]).Member(scratch);
            if (result->Find(member) == null)
                result->Add(member, storeDist ? match.DistanceMeters / metresPerUnit : match.Score);
        }
        // Logged from the result before it is stored (packing it may free it).
        LogDelete(ref c, destination);
        LogStored(ref c, destination, result);
        long count = result->Count;
        void* value = SortedSets.Pack(result, SortedSetLimits.From(c.Server.Config), out var form);
        TypedKeys.Store(ref c, destination, Engine.ValueType.SortedSet, value, count, form);
        TypedKeys.Notify(ref c, KeyspaceEventTypes.SortedSet,
            (flags & SearchFlags.Search) != 0 ? "geosearchstore"u8 : "georadiusstore"u8, destination);
    }

    /// <summary>The stored matches as one ZADD of their scores, so a replay never searches.</summary>
    private static void LogStored(ref CommandContext c, ReadOnlySpan<byte> destination, SortedSetValue* result)
    {
        if (c.LogAs(2 + 2 * (int)result->Count) is not { } log)
            return;
        log.Argument("ZADD"u8);
        log.Argument(destination);
        Span<byte> text = stackalloc byte[40];
        for (SkipNode* node = SortedSetValue.ListOf(result)->First; node != null; node = SkipNode.Next(node))
        {
            log.Argument(text[..NumberFormat.FormatDouble(node->Score, text)]);
            log.Argument(SkipNode.MemberOf(node));
        }
        log.EndCommand();
    }

    /// <summary>A STORE with nothing to store: the destination is deleted when it exists ("del", logged as DEL), else nothing happens.</summary>
    private static void StoreNothing(ref CommandContext c, ReadOnlySpan<byte> destination)
    {
        Database db = c.Database(destination, out uint hash);
        if (!db.Delete(destination, hash, c.ExpireClockMs))
        {
            c.LogNothing();
            return;
        }
        TypedKeys.Notify(ref c, KeyspaceEventTypes.Generic, "del"u8, destination);
        LogDelete(ref c, destination);
    }

    private static void LogDelete(ref CommandContext c, ReadOnlySpan<byte> destination)
    {
        if (c.LogAs(2) is not { } log)
            return;
        log.Argument("DEL"u8);
        log.Argument(destination);
        log.EndCommand();
    }

    /// <summary>
    /// The matches of one search and the skip-list node of each (<see cref="GeoMatch.Member"/> is
    /// the index of its node), in arrays rented from the pool and grown by renting again.
    /// </summary>
    private struct MatchBuffer
    {
        private GeoMatch[] _matches;
        private nint[] _nodes;
        public int Count;

        public MatchBuffer(int capacity)
        {
            _matches = ArrayPool<GeoMatch>.Shared.Rent(capacity);
            _nodes = ArrayPool<nint>.Shared.Rent(capacity);
            Count = 0;
        }

        public readonly Span<GeoMatch> Matches => _matches.AsSpan(0, Count);
        public readonly ReadOnlySpan<nint> Nodes => _nodes.AsSpan(0, Count);

        public void Add(in GeoMatch match, nint position)
        {
            if (Count == _matches.Length || Count == _nodes.Length)
                Grow();
            _matches[Count] = match;
            _nodes[Count] = position;
            Count++;
        }

        private void Grow()
        {
            GeoMatch[] matches = ArrayPool<GeoMatch>.Shared.Rent(Count * 2);
            nint[] nodes = ArrayPool<nint>.Shared.Rent(Count * 2);
            _matches.AsSpan(0, Count).CopyTo(matches);
            _nodes.AsSpan(0, Count).CopyTo(nodes);
            ArrayPool<GeoMatch>.Shared.Return(_matches);
            ArrayPool<nint>.Shared.Return(_nodes);
            _matches = matches;
            _nodes = nodes;
        }

        public readonly void Dispose()
        {
            ArrayPool<GeoMatch>.Shared.Return(_matches);
            ArrayPool<nint>.Shared.Return(_nodes);
        }
    }
}
