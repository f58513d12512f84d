namespace Diagnostics.Server.DataTypes.Geo;

/// <summary>
/// The error replies of Redis 7.0's geo commands (geo.c), as redis-server sends them (without the
/// leading '-'). Where the text names the command, Redis uses the name as the client typed it.
/// </summary>
public static class GeoErrors
{
    /// <summary>GEOADD's odd argument count after the options, or both NX and XX; an unknown option of a search.</summary>
    public const string Syntax = "ERR syntax error";
    /// <summary>A longitude or latitude that is not a number (NaN included).</summary>
    public const string NotFloat = "ERR value is not a valid float";
    /// <summary>COUNT's argument is not an integer.</summary>
    public const string NotInteger = "ERR value is not an integer or out of range";
    /// <summary>A unit other than m, km, ft, mi (any case).</summary>
    public const string UnsupportedUnit = "ERR unsupported unit provided. please use M, KM, FT, MI";
    /// <summary>BYRADIUS's or GEORADIUS's radius is not a number.</summary>
    public const string NeedNumericRadius = "ERR need numeric radius";
    /// <summary>A radius below zero (−0 is accepted).</summary>
    public const string NegativeRadius = "ERR radius cannot be negative";
    /// <summary>BYBOX's width is not a number (checked before the height).</summary>
    public const string NeedNumericWidth = "ERR need numeric width";
    /// <summary>BYBOX's height is not a number.</summary>
    public const string NeedNumericHeight = "ERR need numeric height";
    /// <summary>BYBOX's width or height below zero.</summary>
    public const string NegativeBox = "ERR height or width cannot be negative";
    /// <summary>FROMMEMBER's or GEORADIUSBYMEMBER's member is not in the (existing) key.</summary>
    public const string CouldNotDecodeMember = "ERR could not decode requested zset member";
    /// <summary>COUNT 0 or negative.</summary>
    public const string CountNotPositive = "ERR COUNT must be > 0";
    /// <summary>ANY without COUNT.</summary>
    public const string AnyWithoutCount = "ERR the ANY argument requires COUNT argument";
    /// <summary>GEOSEARCHSTORE with WITHDIST, WITHHASH or WITHCOORD.</summary>
    public const string GeoSearchStoreWithOptions = "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options";
    /// <summary>GEORADIUS[BYMEMBER] with STORE or STOREDIST and WITHDIST, WITHHASH or WITHCOORD.</summary>
    public const string GeoRadiusStoreWithOptions = "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options";

    /// <summary>A position outside ±180, ±85.05112878, printed with C's "%f" (exact, 6 decimals, ties to even, "-0.000000", "inf").</summary>
    public static string InvalidLongitudeLatitude(double longitude, double latitude) =>
        $"ERR invalid longitude,latitude pair {GeoFormat.FormatFixed(longitude, 6)},{GeoFormat.FormatFixed(latitude, 6)}";

    /// <summary>GEOSEARCH[STORE] with neither FROMMEMBER nor FROMLONLAT.</summary>
    public static string ExactlyOneFrom(string commandAsTyped) =>
        $"ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {commandAsTyped}";

    /// <summary>GEOSEARCH[STORE] with neither BYRADIUS nor BYBOX.</summary>
    public static string ExactlyOneBy(string commandAsTyped) =>
        $"ERR exactly one of BYRADIUS and BYBOX can be specified for {commandAsTyped}";
}
