namespace Diagnostics.Benchmarks;

public static class Statistics
{
    /// <summary>The median (mean of the two middle values for an even count): robust to one noisy round.</summary>
    public static double Median(IEnumerable<double> values)
    {
        var sorted = values.Order().ToArray();
        if (sorted.Length == 0)
            throw new ArgumentException("no values", nameof(values));
        int middle = sorted.Length / 2;
        return sorted.Length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }
}
