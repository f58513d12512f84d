using Diagnostics.Server.Diagnostics.History;

namespace Diagnostics.Server.Tests;

/// <summary>
/// Series that come and go (a replica's, named by its address) stay while they are in the window
/// and are forgotten once absent for a whole ring, so replicas that came and went do not pile up.
/// </summary>
public sealed class MetricHistoryStoreTests
{
    private static readonly Dictionary<int, MetricHistoryStore.ThreadSample> NoThreads = [];

    [Fact]
    public void ASeriesAbsentForAWholeRingIsForgottenAndOneThatCameBackStays()
    {
        var store = new MetricHistoryStore(capacity: 5, intervalMillis: 1000);
        store.Append(1000, new() { ["repl_lag_bytes.a:1"] = 10, ["repl_lag_bytes.b:1"] = 20 }, NoThreads);
        for (int i = 1; i <= 4; i++)
            store.Append(1000 + i * 1000, i == 3 ? new() { ["repl_lag_bytes.b:1"] = 5 } : [], NoThreads);
        // Four samples without a: still in the window (reading 0 there), not yet forgotten.
        var window = store.Window(0, long.MaxValue);
        Assert.Equal([10, 0, 0, 0, 0], window.Series["repl_lag_bytes.a:1"]);
        store.Append(6000, [], NoThreads);
        window = store.Window(0, long.MaxValue);
        Assert.DoesNotContain("repl_lag_bytes.a:1", window.Series.Keys);
        Assert.Equal([0, 0, 5, 0, 0], window.Series["repl_lag_bytes.b:1"]);
        Assert.Equal(1, store.SeriesCount);
    }
}
