namespace Diagnostics.Server.DataTypes.Geo;

/// <summary>
/// Redis 7.0's geohash (geohash.c, geohash_helper.c): a position is a 52-bit integer, the
/// interleaving of two 26-bit cell indices (latitude on the even bits, longitude on the odd bits)
/// over the Web Mercator limits, and that integer is the member's sorted-set score. Every
/// computation here repeats Redis's double operations in Redis's order, so that scores, decoded
/// positions and distances are bit-identical to redis-server's (the trigonometry is libm's, through
/// <see cref="Math"/>, as redis-server's is on the same machine).
/// </summary>
public static class GeoHash
{
    /// <summary>Southernmost latitude GEOADD accepts (EPSG:900913's limit; Redis cannot index the poles).</summary>
    public const double MinLatitude = -85.05112878;
    /// <summary>Northernmost latitude GEOADD accepts.</summary>
    public const double MaxLatitude = 85.05112878;
    /// <summary>Westernmost longitude GEOADD accepts.</summary>
    public const double MinLongitude = -180;
    /// <summary>Easternmost longitude GEOADD accepts.</summary>
    public const double MaxLongitude = 180;
    /// <summary>The precision of stored positions: 26 bits per coordinate, 52 in all.</summary>
    public const int MaxStep = 26;
    /// <summary>Redis's earth radius (the quadratic mean radius of WGS-84) used by every distance.</summary>
    public const double EarthRadiusMeters = 6372797.560856;
    /// <summary>The length of a GEOHASH string.</summary>
    public const int Base32Length = 11;

    // Redis multiplies by its D_R (M_PI / 180.0) and divides by it for the way back; so do we.
    internal const double DegreesToRadians = Math.PI / 180.0;

    private const ulong EvenBits = 0x5555555555555555UL;   // latitude
    private const ulong OddBits = 0xAAAAAAAAAAAAAAAAUL;    // longitude

    /// <summary>
    /// Whether GEOADD (and FROMLONLAT, GEORADIUS) accepts the pair: inside ±180 and ±85.05112878,
    /// both limits included. NaN is refused here too (Redis's parser refuses it earlier, with
    /// "ERR value is not a valid float"); infinities are refused with the range error.
    /// </summary>
    public static bool IsValid(double longitude, double latitude) =>
        longitude >= MinLongitude && longitude <= MaxLongitude && latitude >= MinLatitude && latitude <= MaxLatitude;

    /// <summary>
    /// The 52-bit geohash of a position, as GEOADD computes it; false when <see cref="IsValid"/> is
    /// not (reply <see cref="GeoErrors.InvalidLongitudeLatitude"/>). The exact upper limits encode
    /// one cell past the grid (longitude 180 sets bit 53, latitude 85.05112878 bit 52), as in Redis:
    /// such members are stored, and GEOPOS finds them, but no search range ever reaches them.
    /// </summary>
    public static bool TryEncode(double longitude, double latitude, out ulong bits)
    {
        if (!IsValid(longitude, latitude))
        {
            bits = 0;
            return false;
        }
        bits = Encode(longitude, latitude, MaxStep, MinLatitude, MaxLatitude);
        return true;
    }

    /// <summary>
    /// The sorted-set score GEOADD stores for <paramref name="bits"/>: Redis hands ZADD the integer
    /// as text, so the score is the nearest double (exact below 2^53, which only the one-past-the-grid
    /// positions of <see cref="TryEncode"/> exceed).
    /// </summary>
    public static double ToScore(ulong bits) => bits;

    /// <summary>
    /// The geohash bits of any sorted-set score, converted as redis-server's (uint64_t) cast does on
    /// x86-64: the fraction is dropped, negative scores wrap (−1 is all ones), and NaN, infinities and
    /// scores out of range give what the processor's truncation gives. A score ZADD put in a geo set
    /// thus decodes to the same (clamped) position GEOPOS shows for it.
    /// </summary>
    public static ulong FromScore(double score)
    {
        const double TwoTo63 = 9223372036854775808.0;
        if (score >= TwoTo63)
            return (ulong)TruncateToInt64(score - TwoTo63) ^ 0x8000000000000000UL;
        return (ulong)TruncateToInt64(score);
    }

    /// <summary>
    /// The position a score stands for: the centre of its step-26 cell, clamped to the limits, as
    /// GEOPOS, GEODIST and the searches decode it. Any 64-bit value decodes (stray high bits put
    /// the centre outside the grid, where the clamp catches it).
    /// </summary>
    public static void Decode(ulong bits, out double longitude, out double latitude)
    {
        GetCellBounds(bits, MaxStep, out double lonMin, out double lonMax, out double latMin, out double latMax);
        longitude = Math.Clamp((lonMin + lonMax) / 2, MinLongitude, MaxLongitude);
        latitude = Math.Clamp((latMin + latMax) / 2, MinLatitude, MaxLatitude);
    }

    /// <summary>
    /// The great-circle distance in metres between two positions in degrees (Redis's
    /// geohashGetDistance): haversine on <see cref="EarthRadiusMeters"/>, and when the longitudes
    /// give a zero half-difference sine, Redis 7.0's shortcut of the latitude difference alone.
    /// </summary>
    public static double Distance(double longitude1, double latitude1, double longitude2, double latitude2)
    {
        double lon1 = longitude1 * DegreesToRadians;
        double lon2 = longitude2 * DegreesToRadians;
        double v = Math.Sin((lon2 - lon1) / 2);
        if (v == 0.0)
            return LatitudeDistance(latitude1, latitude2);
        double lat1 = latitude1 * DegreesToRadians;
        double lat2 = latitude2 * DegreesToRadians;
        double u = Math.Sin((lat2 - lat1) / 2);
        double a = u * u + Math.Cos(lat1) * Math.Cos(lat2) * v * v;
        return 2.0 * EarthRadiusMeters * Math.Asin(Math.Sqrt(a));
    }

    /// <summary>The distance in metres along a meridian between two latitudes (geohashGetLatDistance).</summary>
    public static double LatitudeDistance(double latitude1, double latitude2) =>
        EarthRadiusMeters * Math.Abs(latitude2 * DegreesToRadians - latitude1 * DegreesToRadians);

    /// <summary>
    /// Writes GEOHASH's 11-character string for a stored position into
    /// <paramref name="destination"/> (at least <see cref="Base32Length"/> bytes). Redis decodes
    /// the score, encodes the centre again over the standard latitude range ±90 (so the string is a
    /// regular geohash), prints 10 base-32 characters from its top 50 bits and a final '0' (the 52
    /// bits have nothing for an 11th).
    /// </summary>
    public static void WriteBase32(ulong bits, Span<byte> destination)
    {
        ReadOnlySpan<byte> alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"u8;
        if (destination.Length < Base32Length)
            throw new ArgumentException($"GEOHASH needs {Base32Length} bytes.", nameof(destination));
        Decode(bits, out double longitude, out double latitude);
        ulong standard = Encode(longitude, latitude, MaxStep, -90, 90);
        for (int i = 0; i < Base32Length - 1; i++)
            destination[i] = alphabet[(int)((standard >> (52 - (i + 1) * 5)) & 0x1f)];
        destination[Base32Length - 1] = (byte)'0';
    }

    /// <summary>
    /// Interleaves the cell indices of a position at <paramref name="step"/> bits per coordinate
    /// (geohashEncode). The caller has checked the limits; the index is the offset's truncation, so
    /// a coordinate exactly on the upper limit gets index 2^step, one past the grid, as in Redis.
    /// </summary>
    internal static ulong Encode(double longitude, double latitude, int step, double latitudeMin, double latitudeMax)
    {
        double latOffset = (latitude - latitudeMin) / (latitudeMax - latitudeMin);
        double lonOffset = (longitude - MinLongitude) / (MaxLongitude - MinLongitude);
        latOffset *= 1UL << step;
        lonOffset *= 1UL << step;
        return Interleave((uint)latOffset, (uint)lonOffset);
    }

    /// <summary>
    /// The rectangle (degrees) of the cell <paramref name="bits"/> names at <paramref name="step"/>
    /// (geohashDecode over the WGS84 limits); stray bits above 2×step widen the indices as in Redis.
    /// </summary>
    internal static void GetCellBounds(ulong bits, int step, out double lonMin, out double lonMax, out double latMin, out double latMax)
    {
        const double LatScale = MaxLatitude - MinLatitude;
        const double LonScale = MaxLongitude - MinLongitude;
        uint latIndex = Compact(bits);
        uint lonIndex = Compact(bits >> 1);
        double cells = 1UL << step;
        latMin = MinLatitude + (latIndex * 1.0 / cells) * LatScale;
        latMax = MinLatitude + (unchecked(latIndex + 1u) * 1.0 / cells) * LatScale;   // uint32 arithmetic, as in C
        lonMin = MinLongitude + (lonIndex * 1.0 / cells) * LonScale;
        lonMax = MinLongitude + (unchecked(lonIndex + 1u) * 1.0 / cells) * LonScale;
    }

    /// <summary>
    /// The cell <paramref name="east"/> columns east and <paramref name="north"/> rows north of
    /// <paramref name="bits"/> (−1, 0 or 1 each), wrapping around at the grid's edges in both
    /// directions as geohashNeighbors does. A coordinate that moves is reduced to its low
    /// <paramref name="step"/> bits; one that does not keeps its bits untouched.
    /// </summary>
    internal static ulong Neighbour(ulong bits, int step, int east, int north)
    {
        uint cellMask = (uint)((1UL << step) - 1);
        if (east != 0)
            bits = (bits & EvenBits) | (Spread((uint)(Compact(bits >> 1) + east) & cellMask) << 1);
        if (north != 0)
            bits = (bits & OddBits) | Spread((uint)(Compact(bits) + north) & cellMask);
        return bits;
    }

    /// <summary>Latitude index on the even bits, longitude index on the odd bits.</summary>
    private static ulong Interleave(uint latitudeIndex, uint longitudeIndex) =>
        Spread(latitudeIndex) | (Spread(longitudeIndex) << 1);

    /// <summary>Moves bit i of <paramref name="value"/> to bit 2i.</summary>
    private static ulong Spread(uint value)
    {
        ulong x = value;
        x = (x | (x << 16)) & 0x0000FFFF0000FFFFUL;
        x = (x | (x << 8)) & 0x00FF00FF00FF00FFUL;
        x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FUL;
        x = (x | (x << 2)) & 0x3333333333333333UL;
        x = (x | (x << 1)) & 0x5555555555555555UL;
        return x;
    }

    /// <summary>Gathers the even bits of <paramref name="value"/> (bit 2i to bit i): the inverse of <see cref="Spread"/>.</summary>
    private static uint Compact(ulong value)
    {
        ulong x = value & 0x5555555555555555UL;
        x = (x | (x >> 1)) & 0x3333333333333333UL;
        x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FUL;
        x = (x | (x >> 4)) & 0x00FF00FF00FF00FFUL;
        x = (x | (x >> 8)) & 0x0000FFFF0000FFFFUL;
        x = (x | (x >> 16)) & 0x00000000FFFFFFFFUL;
        return (uint)x;
    }

    /// <summary>
    /// x86-64's cvttsd2si: truncation toward zero, and 0x8000000000000000 for NaN and anything out
    /// of range (.NET's own conversion saturates instead).
    /// </summary>
    internal static long TruncateToInt64(double value)
    {
        double truncated = Math.Truncate(value);
        return truncated >= -9223372036854775808.0 && truncated < 9223372036854775808.0 ? (long)truncated : long.MinValue;
    }
}
