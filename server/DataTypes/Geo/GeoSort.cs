using System.Buffers;

namespace Diagnostics.Server.DataTypes.Geo;

/// <summary>The order a search asks for: none (scan order), ASC or DESC by distance.</summary>
public enum GeoOrder : byte
{
    /// <summary>No sorting: the members in the order the ranges were scanned.</summary>
    None = 0,
    /// <summary>Nearest first.</summary>
    Ascending = 1,
    /// <summary>Farthest first.</summary>
    Descending = 2,
}

/// <summary>
/// One member a search kept (geo.c's geoPoint): its score, decoded position and distance in
/// metres from the centre, and <see cref="Member"/>, the caller's reference to the member itself.
/// </summary>
public readonly struct GeoMatch(double score, double longitude, double latitude, double distanceMeters, int member)
{
    /// <summary>The sorted-set score (WITHHASH replies it as an integer).</summary>
    public double Score { get; } = score;
    /// <summary>The decoded longitude (WITHCOORD).</summary>
    public double Longitude { get; } = longitude;
    /// <summary>The decoded latitude (WITHCOORD).</summary>
    public double Latitude { get; } = latitude;
    /// <summary>The distance from the centre in metres (WITHDIST divides it by the unit).</summary>
    public double DistanceMeters { get; } = distanceMeters;
    /// <summary>The caller's handle on the member (an index into its own list, say).</summary>
    public int Member { get; } = member;
}

/// <summary>
/// The order of a search's reply (georadiusGeneric's sorting step). Redis sorts the matches with
/// a comparator on the distance in metres alone, so members at equal distances come out in the
/// order of the sorting algorithm: glibc's qsort (a stable merge sort) when every match is
/// returned, Redis's own partial quicksort (pqsort.c) when COUNT returns fewer than were found.
/// Both are reproduced here step for step, so ties, and NaN distances, land where Redis puts them.
/// </summary>
public static class GeoSort
{
    private const int StackScratch = 32;

    /// <summary>
    /// The order Redis applies: the requested one, except that COUNT without ASC, DESC or ANY
    /// means ASC (the nearest n). ANY without an order leaves the scan order.
    /// </summary>
    public static GeoOrder Effective(GeoOrder requested, long count, bool any) =>
        requested == GeoOrder.None && count != 0 && !any ? GeoOrder.Ascending : requested;

    /// <summary>How many matches the reply holds: all of them, or COUNT's number when fewer (0 = no COUNT).</summary>
    public static int Returned(int found, long count) => count == 0 || found < count ? found : (int)count;

    /// <summary>
    /// Orders <paramref name="matches"/> (in scan order) as Redis does before replying; afterwards
    /// the first <see cref="Returned"/> entries are the reply, in order. <paramref name="count"/> is
    /// COUNT's number, 0 for none. <see cref="GeoOrder.None"/> leaves the matches as they are.
    /// </summary>
    public static void Sort(Span<GeoMatch> matches, GeoOrder order, long count)
    {
        if (order == GeoOrder.None || matches.Length < 2)
            return;
        bool descending = order == GeoOrder.Descending;
        int returned = Returned(matches.Length, count);
        if (returned == matches.Length)
            MergeSort(matches, descending);
        else
            PartialQuickSort(matches, descending, 0, returned - 1);
    }

    /// <summary>sort_gp_asc (and its negation for DESC): 1, 0 or -1; anything against NaN is -1.</summary>
    private static int Compare(in GeoMatch a, in GeoMatch b, bool descending)
    {
        int result = a.DistanceMeters > b.DistanceMeters ? 1 : a.DistanceMeters == b.DistanceMeters ? 0 : -1;
        return descending ? -result : result;
    }

    // ---- glibc's qsort: msort's top-down merge sort, taking from the left run on ties ----

    private static void MergeSort(Span<GeoMatch> matches, bool descending)
    {
        GeoMatch[]? rented = null;
        Span<GeoMatch> scratch = matches.Length <= StackScratch
            ? stackalloc GeoMatch[StackScratch]
            : (rented = ArrayPool<GeoMatch>.Shared.Rent(matches.Length));
        try
        {
            MergeSort(matches, scratch[..matches.Length], descending);
        }
        finally
        {
            if (rented is not null)
                ArrayPool<GeoMatch>.Shared.Return(rented);
        }
    }

    private static void MergeSort(Span<GeoMatch> items, Span<GeoMatch> scratch, bool descending)
    {
        int n = items.Length;
        if (n <= 1)
            return;
        int n1 = n / 2;
        Span<GeoMatch> left = items[..n1], right = items[n1..];
        MergeSort(left, scratch, descending);
        MergeSort(right, scratch, descending);

        int i = 0, j = 0, k = 0;
        while (i < left.Length && j < right.Length)
            scratch[k++] = Compare(left[i], right[j], descending) <= 0 ? left[i++] : right[j++];
        // What is left of the right run is already in place; the left run's rest goes before it.
        left[i..].CopyTo(items[k..]);
        scratch[..k].CopyTo(items);
    }

    // ---- pqsort.c: Bentley & McIlroy's quicksort that only recurses into parts overlapping [low, high] ----

    private static void PartialQuickSort(Span<GeoMatch> all, bool descending, int low, int high)
    {
        int start = 0, n = all.Length;
        while (true)
        {
            Span<GeoMatch> a = all.Slice(start, n);
            if (n < 7)
            {
                for (int m = 1; m < n; m++)
                    for (int l = m; l > 0 && Compare(a[l - 1], a[l], descending) > 0; l--)
                        Swap(a, l, l - 1);
                return;
            }

            int pm = n / 2;
            if (n > 7)
            {
                int pl = 0, pn = n - 1;
                if (n > 40)
                {
                    int d = n / 8;
                    pl = Median3(a, pl, pl + d, pl + 2 * d, descending);
                    pm = Median3(a, pm - d, pm, pm + d, descending);
                    pn = Median3(a, pn - 2 * d, pn - d, pn, descending);
                }
                pm = Median3(a, pl, pm, pn, descending);
            }
            Swap(a, 0, pm);

            // Partition around a[0]; elements equal to it gather at both ends.
            int pa = 1, pb = 1, pc = n - 1, pd = n - 1;
            while (true)
            {
                int result;
                while (pb <= pc && (result = Compare(a[pb], a[0], descending)) <= 0)
                {
                    if (result == 0)
                        Swap(a, pa++, pb);
                    pb++;
                }
                while (pb <= pc && (result = Compare(a[pc], a[0], descending)) >= 0)
                {
                    if (result == 0)
                        Swap(a, pc, pd--);
                    pc--;
                }
                if (pb > pc)
                    break;
                Swap(a, pb++, pc--);
            }

            // Move the equal runs to the middle.
            int r = Math.Min(pa, pb - pa);
            VectorSwap(a, 0, pb - r, r);
            r = Math.Min(pd - pc, n - pd - 1);
            VectorSwap(a, pb, n - r, r);

            int lessCount = pb - pa;
            if (lessCount > 1 && Overlaps(start, lessCount, low, high))
                PartialQuickSort(all.Slice(start, lessCount), descending, low - start, high - start);

            int greaterCount = pd - pc;
            if (greaterCount <= 1)
                return;
            start += n - greaterCount;
            n = greaterCount;
            if (!Overlaps(start, n, low, high))
                return;
        }
    }

    /// <summary>Whether elements [start, start + length) meet [low, high] (pqsort's lrange/rrange test).</summary>
    private static bool Overlaps(int start, int length, int low, int high) =>
        !((low < start && high < start) || (low > start + length - 1 && high > start + length - 1));

    private static int Median3(Span<GeoMatch> a, int i, int j, int k, bool descending) =>
        Compare(a[i], a[j], descending) < 0
            ? (Compare(a[j], a[k], descending) < 0 ? j : (Compare(a[i], a[k], descending) < 0 ? k : i))
            : (Compare(a[j], a[k], descending) > 0 ? j : (Compare(a[i], a[k], descending) < 0 ? i : k));

    private static void Swap(Span<GeoMatch> a, int i, int j) => (a[i], a[j]) = (a[j], a[i]);

    private static void VectorSwap(Span<GeoMatch> a, int i, int j, int length)
    {
        for (int k = 0; k < length; k++)
            Swap(a, i + k, j + k);
    }
}
