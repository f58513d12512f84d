namespace Diagnostics.Server.DataTypes.Geo;

/// <summary>The two search areas of GEOSEARCH: BYRADIUS (also GEORADIUS's) and BYBOX.</summary>
public enum GeoShapeKind : byte
{
    /// <summary>A circle: every position at most <see cref="GeoShape.Radius"/> from the centre.</summary>
    Radius = 1,
    /// <summary>A box: at most half the height north or south, half the width east or west (along the point's parallel).</summary>
    Box = 2,
}

/// <summary>
/// A search area as Redis keeps it (its GeoShape): the centre in degrees, the sizes in the unit the
/// client gave, and the unit's metres. The sizes stay in the client's unit because Redis converts
/// them to metres at each use, in differing orders (radius × unit; (width / 2) × unit for the
/// bounding box but (width × unit) / 2 for the point test), and the last bits of those products
/// decide points on the edge.
/// </summary>
public readonly struct GeoShape
{
    /// <summary>Circle or box.</summary>
    public GeoShapeKind Kind { get; }
    /// <summary>The centre's longitude in degrees.</summary>
    public double Longitude { get; }
    /// <summary>The centre's latitude in degrees.</summary>
    public double Latitude { get; }
    /// <summary>The circle's radius in the client's unit (0 for a box).</summary>
    public double Radius { get; }
    /// <summary>The box's full width (east-west) in the client's unit (0 for a circle).</summary>
    public double Width { get; }
    /// <summary>The box's full height (north-south) in the client's unit (0 for a circle).</summary>
    public double Height { get; }
    /// <summary>Metres per unit of the sizes (<see cref="GeoUnits"/>); WITHDIST and STOREDIST divide metres by it.</summary>
    public double MetresPerUnit { get; }

    private GeoShape(GeoShapeKind kind, double longitude, double latitude, double radius, double width, double height, double metresPerUnit)
    {
        Kind = kind;
        Longitude = longitude;
        Latitude = latitude;
        Radius = radius;
        Width = width;
        Height = height;
        MetresPerUnit = metresPerUnit;
    }

    /// <summary>BYRADIUS radius unit, or GEORADIUS's radius, around the centre.</summary>
    public static GeoShape ByRadius(double longitude, double latitude, double radius, double metresPerUnit) =>
        new(GeoShapeKind.Radius, longitude, latitude, radius, 0, 0, metresPerUnit);

    /// <summary>BYBOX width height unit around the centre.</summary>
    public static GeoShape ByBox(double longitude, double latitude, double width, double height, double metresPerUnit) =>
        new(GeoShapeKind.Box, longitude, latitude, 0, width, height, metresPerUnit);

    /// <summary>The radius in metres, as the point test computes it (radius × unit).</summary>
    public double RadiusMeters => Radius * MetresPerUnit;

    /// <summary>The box's width in metres, as the point test computes it (width × unit).</summary>
    public double WidthMeters => Width * MetresPerUnit;

    /// <summary>The box's height in metres, as the point test computes it (height × unit).</summary>
    public double HeightMeters => Height * MetresPerUnit;
}

/// <summary>
/// One range of scores a search scans: every member with <see cref="Min"/> ≤ score &lt;
/// <see cref="Max"/>, the scores of one geohash cell (its bits followed by any 52 − 2×step bits).
/// </summary>
public readonly struct GeoScoreRange(ulong minBits, ulong maxBits)
{
    /// <summary>The cell's first score, as an integer.</summary>
    public ulong MinBits { get; } = minBits;
    /// <summary>The next cell's first score (excluded), as an integer.</summary>
    public ulong MaxBits { get; } = maxBits;
    /// <summary>The lowest score included (Redis passes the integer to the sorted set as a double).</summary>
    public double Min => MinBits;
    /// <summary>The lowest score excluded.</summary>
    public double Max => MaxBits;

    /// <summary>Whether the sorted-set score falls in [Min, Max).</summary>
    public bool Contains(double score) => score >= Min && score < Max;

    /// <summary>The same range as the sorted set's range type (min inclusive, max exclusive).</summary>
    public ScoreRange ToScoreRange() => new(Min, Max, minExclusive: false, maxExclusive: true);

    /// <inheritdoc/>
    public override string ToString() => $"[{MinBits}, {MaxBits})";
}
