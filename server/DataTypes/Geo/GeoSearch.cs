namespace Diagnostics.Server.DataTypes.Geo;

/// <summary>
/// GEOSEARCH / GEORADIUS's search plan (geohash_helper.c's geohashCalculateAreasByShapeWGS84 and
/// geo.c's membersOfAllNeighbors) and point test (geoWithinShape). A search scans the score ranges of
/// <see cref="Areas"/> in the order given, each in the sorted set's order (score, then member), and
/// keeps the members <see cref="ContainsScore"/> accepts: the members and their order are then
/// Redis's unsorted reply. With ANY and COUNT n, Redis stops as soon as n members are kept (also
/// between ranges, never before the first one).
/// </summary>
public static class GeoSearch
{
    /// <summary>The most ranges a search scans: the centre cell and its 8 neighbours.</summary>
    public const int MaxAreas = 9;

    private const double MercatorMax = 20037726.37;

    // The neighbours in the order Redis scans them after the centre: N, S, E, W, NE, NW, SE, SW.
    private static ReadOnlySpan<sbyte> EastSteps => [0, 0, 1, -1, 1, -1, 1, -1];
    private static ReadOnlySpan<sbyte> NorthSteps => [1, -1, 0, 0, 1, 1, -1, -1];

    /// <summary>
    /// Writes the score ranges to scan for <paramref name="shape"/> into <paramref name="ranges"/>
    /// (at least <see cref="MaxAreas"/> long), in Redis's order, and returns how many: the centre's
    /// cell at the estimated step, then its neighbours north, south, east, west, north-east,
    /// north-west, south-east, south-west, less those Redis prunes as outside the search's bounding
    /// box and those equal to the range scanned just before (big areas wrap around the grid).
    /// A centre that is not a valid position (NaN included; Redis's parsing refuses those) gives 0.
    /// </summary>
    public static int Areas(in GeoShape shape, Span<GeoScoreRange> ranges)
    {
        if (ranges.Length < MaxAreas)
            throw new ArgumentException($"A search needs room for {MaxAreas} ranges.", nameof(ranges));
        double longitude = shape.Longitude, latitude = shape.Latitude;
        if (!GeoHash.IsValid(longitude, latitude))
            return 0;

        GetBoundingBox(shape, out double minLon, out double minLat, out double maxLon, out double maxLat);

        // A box is sized by its centre-to-corner distance; the sizes are halved before the unit applies.
        double radiusMeters = shape.Kind == GeoShapeKind.Radius
            ? shape.Radius
            : Math.Sqrt((shape.Width / 2) * (shape.Width / 2) + (shape.Height / 2) * (shape.Height / 2));
        radiusMeters *= shape.MetresPerUnit;
        int step = EstimateStep(radiusMeters, latitude);

        // The estimate can leave the area poking out of the 3×3 cells when the centre sits near an
        // edge of its cell: then Redis takes cells twice as large, once.
        ulong centre = GeoHash.Encode(longitude, latitude, step, GeoHash.MinLatitude, GeoHash.MaxLatitude);
        if (step > 1 && !NeighboursCover(centre, step, minLon, minLat, maxLon, maxLat))
        {
            step--;
            centre = GeoHash.Encode(longitude, latitude, step, GeoHash.MinLatitude, GeoHash.MaxLatitude);
        }

        // A neighbour is useless when the centre cell already reaches past the bounding box on its
        // side. Redis leaves step 1's four huge cells alone.
        bool skipSouth = false, skipNorth = false, skipWest = false, skipEast = false;
        if (step >= 2)
        {
            GeoHash.GetCellBounds(centre, step, out double lonMin, out double lonMax, out double latMin, out double latMax);
            skipSouth = latMin < minLat;
            skipNorth = latMax > maxLat;
            skipWest = lonMin < minLon;
            skipEast = lonMax > maxLon;
        }

        int count = 0;
        ranges[count++] = RangeOf(centre, step);
        // Redis skips a neighbour equal to the last neighbour scanned (never compared with the
        // centre, which no neighbour can equal: a move always changes the cell's low bits).
        ulong lastScanned = 0;
        bool scannedNeighbour = false;
        for (int i = 0; i < 8; i++)
        {
            int east = EastSteps[i], north = NorthSteps[i];
            if ((north > 0 && skipNorth) || (north < 0 && skipSouth) || (east > 0 && skipEast) || (east < 0 && skipWest))
                continue;
            ulong neighbour = GeoHash.Neighbour(centre, step, east, north);
            if (scannedNeighbour && neighbour == lastScanned)
                continue;
            ranges[count++] = RangeOf(neighbour, step);
            lastScanned = neighbour;
            scannedNeighbour = true;
        }
        return count;
    }

    /// <summary>
    /// Whether a position is inside the shape, with its distance in metres from the centre (what
    /// WITHDIST shows, once divided by the unit). A circle keeps what is at most the radius away
    /// (haversine); a box keeps what is at most half the height away along the meridian and half
    /// the width away along the point's own parallel. <paramref name="distanceMeters"/> is 0 when a
    /// box refuses the point (Redis does not compute it then); a circle's refusal still gives it.
    /// Comparisons with NaN accept, as Redis's do (only "greater than" refuses).
    /// </summary>
    public static bool Contains(in GeoShape shape, double longitude, double latitude, out double distanceMeters)
    {
        if (shape.Kind == GeoShapeKind.Radius)
        {
            distanceMeters = GeoHash.Distance(shape.Longitude, shape.Latitude, longitude, latitude);
            return !(distanceMeters > shape.Radius * shape.MetresPerUnit);
        }

        distanceMeters = 0;
        double widthMeters = shape.Width * shape.MetresPerUnit, heightMeters = shape.Height * shape.MetresPerUnit;
        if (GeoHash.LatitudeDistance(latitude, shape.Latitude) > heightMeters / 2)
            return false;
        if (GeoHash.Distance(longitude, latitude, shape.Longitude, latitude) > widthMeters / 2)
            return false;
        distanceMeters = GeoHash.Distance(shape.Longitude, shape.Latitude, longitude, latitude);
        return true;
    }

    /// <summary>
    /// The test a search applies to each member of a scanned range: decodes the score
    /// (<see cref="GeoHash.FromScore"/>, <see cref="GeoHash.Decode"/>) and applies
    /// <see cref="Contains"/>. The decoded position is what WITHCOORD shows.
    /// </summary>
    public static bool ContainsScore(in GeoShape shape, double score, out double longitude, out double latitude, out double distanceMeters)
    {
        GeoHash.Decode(GeoHash.FromScore(score), out longitude, out latitude);
        return Contains(shape, longitude, latitude, out distanceMeters);
    }

    /// <summary>
    /// The cell size Redis starts from (geohashEstimateStepsByRadius): the step whose cells are
    /// somewhat larger than the radius, one or two steps coarser beyond 66° and 80° of latitude,
    /// within 1..26; a zero radius asks for the finest cells.
    /// </summary>
    internal static int EstimateStep(double radiusMeters, double latitude)
    {
        if (radiusMeters == 0)
            return GeoHash.MaxStep;
        int step = 1;
        while (radiusMeters < MercatorMax)
        {
            radiusMeters *= 2;
            step++;
        }
        step -= 2;
        if (latitude > 66 || latitude < -66)
        {
            step--;
            if (latitude > 80 || latitude < -80)
                step--;
        }
        return Math.Clamp(step, 1, GeoHash.MaxStep);
    }

    /// <summary>
    /// The search's bounding box in degrees (geohashBoundingBox). Its east-west half-width is taken
    /// at the parallel farther from the equator (the wider one in degrees), decided by the centre's
    /// hemisphere. Not clamped to the grid: it only serves comparisons.
    /// </summary>
    internal static void GetBoundingBox(in GeoShape shape, out double minLon, out double minLat, out double maxLon, out double maxLat)
    {
        double longitude = shape.Longitude, latitude = shape.Latitude;
        bool circle = shape.Kind == GeoShapeKind.Radius;
        double height = shape.MetresPerUnit * (circle ? shape.Radius : shape.Height / 2);
        double width = shape.MetresPerUnit * (circle ? shape.Radius : shape.Width / 2);

        double latDelta = height / GeoHash.EarthRadiusMeters / GeoHash.DegreesToRadians;
        double lonDeltaTop = width / GeoHash.EarthRadiusMeters / Math.Cos((latitude + latDelta) * GeoHash.DegreesToRadians) / GeoHash.DegreesToRadians;
        double lonDeltaBottom = width / GeoHash.EarthRadiusMeters / Math.Cos((latitude - latDelta) * GeoHash.DegreesToRadians) / GeoHash.DegreesToRadians;
        double lonDelta = latitude < 0 ? lonDeltaBottom : lonDeltaTop;
        minLon = longitude - lonDelta;
        maxLon = longitude + lonDelta;
        minLat = latitude - latDelta;
        maxLat = latitude + latDelta;
    }

    /// <summary>
    /// Whether the four direct neighbours of the centre cell reach the bounding box's edges (Redis
    /// decreases the step when one falls short; wrapped-around neighbours usually do).
    /// </summary>
    private static bool NeighboursCover(ulong centre, int step, double minLon, double minLat, double maxLon, double maxLat)
    {
        GeoHash.GetCellBounds(GeoHash.Neighbour(centre, step, 0, 1), step, out _, out _, out _, out double northMax);
        GeoHash.GetCellBounds(GeoHash.Neighbour(centre, step, 0, -1), step, out _, out _, out double southMin, out _);
        GeoHash.GetCellBounds(GeoHash.Neighbour(centre, step, 1, 0), step, out _, out double eastMax, out _, out _);
        GeoHash.GetCellBounds(GeoHash.Neighbour(centre, step, -1, 0), step, out double westMin, out _, out _, out _);
        return !(northMax < maxLat || southMin > minLat || eastMax < maxLon || westMin > minLon);
    }

    /// <summary>The scores of one cell: its bits aligned to 52, up to the next cell's (scoresOfGeoHashBox).</summary>
    private static GeoScoreRange RangeOf(ulong cell, int step)
    {
        int shift = 52 - step * 2;
        return new GeoScoreRange(cell << shift, (cell + 1) << shift);
    }
}
