using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.DataTypes.Geo;

/// <summary>
/// The distance units of GEODIST, GEOSEARCH and GEORADIUS (geo.c's extractUnitOrReply): m, km, ft
/// and mi in any letter case, each as its factor to metres. Distances are converted by dividing
/// metres by the factor, sizes by multiplying the client's number by it.
/// </summary>
public static class GeoUnits
{
    /// <summary>Metres per metre ("m").</summary>
    public const double Metres = 1;
    /// <summary>Metres per kilometre ("km").</summary>
    public const double Kilometres = 1000;
    /// <summary>Metres per foot ("ft").</summary>
    public const double Feet = 0.3048;
    /// <summary>Metres per mile ("mi"), as Redis rounds it.</summary>
    public const double Miles = 1609.34;

    /// <summary>
    /// The factor of a unit argument; false for anything else (reply <see cref="GeoErrors.UnsupportedUnit"/>).
    /// </summary>
    public static bool TryParse(ReadOnlySpan<byte> unit, out double metresPerUnit)
    {
        metresPerUnit = unit.Length switch
        {
            1 when NumberFormat.EqualsIgnoreCase(unit, "m"u8) => Metres,
            2 when NumberFormat.EqualsIgnoreCase(unit, "km"u8) => Kilometres,
            2 when NumberFormat.EqualsIgnoreCase(unit, "ft"u8) => Feet,
            2 when NumberFormat.EqualsIgnoreCase(unit, "mi"u8) => Miles,
            _ => 0,
        };
        return metresPerUnit != 0;
    }
}
