using System.Text.RegularExpressions;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// Per-command latency tracking as Redis 7 shows it: LATENCY HISTOGRAM (calls and cumulative
/// power-of-two microsecond buckets), INFO latencystats (percentiles with %.3f values),
/// latency-tracking and latency-tracking-info-percentiles, and CONFIG RESETSTAT. Expected texts
/// were checked against redis-server 7.0.15. Each test runs its own server: the distributions
/// are server-wide and the counts must be exact.
/// </summary>
public sealed partial class LatencyTrackingTests
{
    // Redis's labels for the levels 2^10, 2^11... ns: the highest value of its HdrHistogram bucket
    // at 2^k (2^k + 2^(k-7) - 1 ns) in whole microseconds.
    private static readonly long[] s_redisBucketLabels = Enumerable.Range(10, 28).Select(k => ((1L << k) + (1L << (k - 7)) - 1) / 1000).ToArray();

    [Fact]
    public void HistogramCallsEqualTheCommandsSentAndBucketsAreCumulative()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        const int sets = 137, gets = 61;
        Pipeline.RunAll(c, Enumerable.Range(0, sets).Select(i => new[] { "SET", $"hist:{i % 10}", "v" }));
        for (int i = 0; i < gets; i++)
            c.Call("GET", $"hist:{i}");

        var histograms = HistogramMap(c.Call("LATENCY", "HISTOGRAM", "set", "get"));
        Assert.Equal(new[] { "set", "get" }, histograms.Keys);
        AssertCumulative(histograms["set"], sets);
        AssertCumulative(histograms["get"], gets);

        // Every command that ran is listed without arguments, LATENCY HISTOGRAM itself included
        // (recorded once it has replied, so from its second call on).
        var all = HistogramMap(c.Call("LATENCY", "HISTOGRAM"));
        Assert.Equal(sets, all["set"].Calls);
        Assert.Equal(gets, all["get"].Calls);
        Assert.Equal(1, all["latency|histogram"].Calls);
        foreach (var (_, histogram) in all)
            AssertCumulative(histogram, histogram.Calls);
    }

    [Fact]
    public void HistogramRepliesAreMapsInResp3()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        RespAssert.Ok(c.Call("SET", "resp3:k", "v"));
        Assert.False(c.Call("HELLO", "3").IsError);
        var reply = c.Call("LATENCY", "HISTOGRAM", "set");
        Assert.Equal('%', reply.Kind);
        Assert.Equal(1, reply.Integer);
        Assert.Equal("set", reply.Array[0].Text);
        var body = reply.Array[1];
        Assert.Equal('%', body.Kind);
        Assert.Equal("calls", body.Array[0].Text);
        Assert.Equal("histogram_usec", body.Array[2].Text);
        RespAssert.Integer(1, body.Array[1]);
        var buckets = body.Array[3];
        Assert.Equal('%', buckets.Kind);
        Assert.Equal(1, buckets.Integer);
        Assert.Contains(buckets.Array[0].Integer, s_redisBucketLabels);
        RespAssert.Integer(1, buckets.Array[1]);

        var none = c.Call("LATENCY", "HISTOGRAM", "nosuch");
        Assert.Equal('%', none.Kind);
        Assert.Empty(none.Array);
    }

    [Fact]
    public void HistogramNamesSubcommandsAsRedisAndSkipsUnknownNames()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        Assert.False(c.Call("CONFIG", "GET", "port").IsError);
        Assert.False(c.Call("CONFIG", "GET", "hz").IsError);
        RespAssert.Ok(c.Call("CONFIG", "SET", "hz", "10"));
        RespAssert.Ok(c.Call("SET", "names:k", "v"));

        // A subcommand by its full name in any case, a container for all its subcommands with data,
        // unknown names (and two levels of '|') skipped, a repeated name repeated, as redis-server does.
        var reply = c.Call("LATENCY", "HISTOGRAM", "CONFIG|GET", "nosuch", "config", "config|nosuch", "set|x", "a|b|c", "set", "set");
        Assert.Equal(10, reply.Array.Count);
        var names = Enumerable.Range(0, 5).Select(i => reply.Array[i * 2].Text).ToList();
        Assert.Equal("config|get", names[0]);
        Assert.Equal(new[] { "config|get", "config|set" }, names[1..3].Order());
        Assert.Equal(new[] { "set", "set" }, names[3..]);
        var map = HistogramMap(reply);
        Assert.Equal(2, map["config|get"].Calls);
        Assert.Equal(1, map["config|set"].Calls);

        Assert.Empty(c.Call("LATENCY", "HISTOGRAM", "nosuch").Array);
        Assert.Empty(c.Call("LATENCY", "HISTOGRAM", "config|nosuch").Array);
        Assert.Empty(c.Call("LATENCY", "HISTOGRAM", "get").Array); // known, never called
    }

    [Fact]
    public void DebugSleepLandsInThePowerOfTwoBucketOfItsDuration()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        RespAssert.Ok(c.Call("DEBUG", "SLEEP", "0.05"));

        // INFO commandstats has the same call's duration in microseconds: the bucket must be the
        // first power of two of nanoseconds above it.
        long usec = long.Parse(InfoFields.Parts(InfoFields.Get(c, "commandstats", "cmdstat_debug"))["usec"]);
        Assert.True(usec >= 50_000, $"DEBUG SLEEP 0.05 took {usec} us");
        var debug = HistogramMap(c.Call("LATENCY", "HISTOGRAM", "debug"))["debug"];
        Assert.Equal(1, debug.Calls);
        var (label, count) = Assert.Single(debug.Buckets);
        Assert.Equal(1, count);
        Assert.Contains(label, LabelsAround(usec));
        if (usec < 67_000)
            Assert.Equal(67633, label); // 2^26 ns, as redis-server labels it

        // The percentiles are the top of the 1/16-wide bucket holding that duration.
        var parts = InfoFields.Parts(InfoFields.Get(c, "latencystats", "latency_percentiles_usec_debug"));
        foreach (string p in new[] { "p50", "p99", "p99.9" })
        {
            double value = double.Parse(parts[p], System.Globalization.CultureInfo.InvariantCulture);
            Assert.InRange(value, usec, (usec + 1) * 1.0625);
        }
    }

    [Fact]
    public void LatencystatsIsRedisFormattedAndOnlyInAllAndEverything()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        RespAssert.Ok(c.Call("SET", "stats:k", "v"));
        Assert.False(c.Call("CONFIG", "GET", "port").IsError);

        var fields = InfoFields.Read(c, "latencystats");
        Assert.Matches(PercentilesLine(), fields["latency_percentiles_usec_set"]);
        Assert.Matches(PercentilesLine(), fields["latency_percentiles_usec_config|get"]);
        Assert.DoesNotContain("latency_percentiles_usec_get", fields.Keys);

        Assert.DoesNotContain("# Latencystats", c.Call("INFO").Text);
        foreach (string section in new[] { "all", "everything" })
        {
            var headers = c.Call("INFO", section).Text!.Split("\r\n").Where(l => l.StartsWith('#')).ToList();
            int latency = headers.IndexOf("# Latencystats");
            Assert.True(latency > 0, $"INFO {section} has no Latencystats section");
            Assert.Equal("# Errorstats", headers[latency - 1]);
            Assert.Equal("# Cluster", headers[latency + 1]);
        }
    }

    [Fact]
    public void InfoPercentilesFollowTheirSettingWithRedisValidation()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        RespAssert.Bulk("50 99 99.9", c.Call("CONFIG", "GET", "latency-tracking-info-percentiles").Array[1]);
        for (int i = 0; i < 20; i++)
            RespAssert.Ok(c.Call("SET", "pct:k", "v"));

        RespAssert.Ok(c.Call("CONFIG", "SET", "latency-tracking-info-percentiles", "0 99.99 100 12.5000 1e1"));
        RespAssert.Bulk("0 99.99 100 12.5 10", c.Call("CONFIG", "GET", "latency-tracking-info-percentiles").Array[1]);
        string line = InfoFields.Get(c, "latencystats", "latency_percentiles_usec_set");
        Assert.Matches(@"^p0=\d+\.\d{3},p99\.99=\d+\.\d{3},p100=\d+\.\d{3},p12\.5=\d+\.\d{3},p10=\d+\.\d{3}$", line);
        var values = InfoFields.Parts(line).ToDictionary(p => p.Key, p => double.Parse(p.Value, System.Globalization.CultureInfo.InvariantCulture));
        Assert.True(values["p0"] <= values["p10"] && values["p10"] <= values["p12.5"] && values["p12.5"] <= values["p99.99"] && values["p99.99"] == values["p100"],
            $"percentiles out of order: {line}");

        const string prefix = "ERR CONFIG SET failed (possibly related to argument 'latency-tracking-info-percentiles') - ";
        RespAssert.Error(prefix + "Invalid latency-tracking-info-percentiles parameters", c.Call("CONFIG", "SET", "latency-tracking-info-percentiles", "50 abc"));
        RespAssert.Error(prefix + "Invalid latency-tracking-info-percentiles parameters", c.Call("CONFIG", "SET", "latency-tracking-info-percentiles", "50  99"));
        RespAssert.Error(prefix + "Invalid latency-tracking-info-percentiles parameters", c.Call("CONFIG", "SET", "latency-tracking-info-percentiles", "nan"));
        RespAssert.Error(prefix + "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]", c.Call("CONFIG", "SET", "latency-tracking-info-percentiles", "50 101"));
        RespAssert.Error(prefix + "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]", c.Call("CONFIG", "SET", "latency-tracking-info-percentiles", "-1"));
        RespAssert.Error(prefix + "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]", c.Call("CONFIG", "SET", "latency-tracking-info-percentiles", "inf"));
        RespAssert.Bulk("0 99.99 100 12.5 10", c.Call("CONFIG", "GET", "latency-tracking-info-percentiles").Array[1]);

        RespAssert.Ok(c.Call("CONFIG", "SET", "latency-tracking-info-percentiles", "99.9999999"));
        RespAssert.Bulk("100", c.Call("CONFIG", "GET", "latency-tracking-info-percentiles").Array[1]);
        RespAssert.Ok(c.Call("CONFIG", "SET", "latency-tracking-info-percentiles", ""));
        RespAssert.Bulk("", c.Call("CONFIG", "GET", "latency-tracking-info-percentiles").Array[1]);
        Assert.Equal("", InfoFields.Get(c, "latencystats", "latency_percentiles_usec_set"));
    }

    [Fact]
    public void TrackingOffStopsRecordingButKeepsWhatWasRecorded()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        for (int i = 0; i < 5; i++)
            RespAssert.Ok(c.Call("SET", "off:k", "v"));
        RespAssert.Ok(c.Call("CONFIG", "SET", "latency-tracking", "no"));
        RespAssert.Bulk("no", c.Call("CONFIG", "GET", "latency-tracking").Array[1]);
        for (int i = 0; i < 7; i++)
            RespAssert.Ok(c.Call("SET", "off:k", "v"));

        Assert.Equal(5, HistogramMap(c.Call("LATENCY", "HISTOGRAM", "set"))["set"].Calls);
        Assert.Equal("# Latencystats\r\n", c.Call("INFO", "latencystats").Text);
        RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'latency-tracking') - argument must be 'yes' or 'no'",
            c.Call("CONFIG", "SET", "latency-tracking", "maybe"));

        RespAssert.Ok(c.Call("CONFIG", "SET", "latency-tracking", "yes"));
        RespAssert.Ok(c.Call("SET", "off:k", "v"));
        Assert.Equal(6, HistogramMap(c.Call("LATENCY", "HISTOGRAM", "set"))["set"].Calls);
        Assert.Contains("latency_percentiles_usec_set", InfoFields.Read(c, "latencystats").Keys);
    }

    [Fact]
    public void TrackingCanBeTurnedOffAtStartup()
    {
        using var server = ServerProcess.Start("--latency-tracking", "no");
        using var c = server.Connect();
        RespAssert.Ok(c.Call("SET", "startup:k", "v"));
        Assert.Empty(c.Call("LATENCY", "HISTOGRAM").Array);
    }

    [Fact]
    public void ResetStatClearsTheDistributionsButNotTheLatencyEvents()
    {
        // 100 ms: a loaded machine can stretch the expire cycle past 10 ms, a second event.
        using var server = ServerProcess.Start("--latency-monitor-threshold", "100");
        using var c = server.Connect();
        RespAssert.Ok(c.Call("SET", "reset:k", "v"));
        RespAssert.Ok(c.Call("DEBUG", "SLEEP", "0.2"));
        Assert.Contains("set", HistogramMap(c.Call("LATENCY", "HISTOGRAM")).Keys);

        RespAssert.Ok(c.Call("CONFIG", "RESETSTAT"));
        // Only the RESETSTAT itself, recorded after it ran, as in Redis.
        var after = HistogramMap(c.Call("LATENCY", "HISTOGRAM"));
        Assert.Equal(new[] { "config|resetstat" }, after.Keys);
        Assert.Equal(1, after["config|resetstat"].Calls);
        Assert.DoesNotContain("latency_percentiles_usec_set", InfoFields.Read(c, "latencystats").Keys);
        Assert.Equal("command", Assert.Single(c.Call("LATENCY", "LATEST").Array).Array[0].Text);

        RespAssert.Ok(c.Call("SET", "reset:k", "v"));
        Assert.Equal(1, HistogramMap(c.Call("LATENCY", "HISTOGRAM", "set"))["set"].Calls);
    }

    private sealed record Histogram(long Calls, List<(long Micros, long Count)> Buckets);

    /// <summary>LATENCY HISTOGRAM's reply (RESP2 flat arrays or RESP3 maps) by command name, in reply order.</summary>
    private static Dictionary<string, Histogram> HistogramMap(RespValue reply)
    {
        Assert.False(reply.IsError, reply.ToString());
        var map = new Dictionary<string, Histogram>();
        for (int i = 0; i < reply.Array.Count; i += 2)
        {
            var body = reply.Array[i + 1].Array;
            Assert.Equal("calls", body[0].Text);
            Assert.Equal("histogram_usec", body[2].Text);
            var buckets = new List<(long, long)>();
            for (int j = 0; j < body[3].Array.Count; j += 2)
                buckets.Add((body[3].Array[j].Integer, body[3].Array[j + 1].Integer));
            map[reply.Array[i].Text!] = new Histogram(body[1].Integer, buckets);
        }
        return map;
    }

    /// <summary>Keys are Redis's labels in rising order; counts rise strictly and end at the calls.</summary>
    private static void AssertCumulative(Histogram histogram, long calls)
    {
        Assert.Equal(calls, histogram.Calls);
        Assert.NotEmpty(histogram.Buckets);
        for (int i = 0; i < histogram.Buckets.Count; i++)
        {
            Assert.Contains(histogram.Buckets[i].Micros, s_redisBucketLabels);
            if (i > 0)
            {
                Assert.True(histogram.Buckets[i].Micros > histogram.Buckets[i - 1].Micros, "bucket keys must rise");
                Assert.True(histogram.Buckets[i].Count > histogram.Buckets[i - 1].Count, "only buckets where the count grew are listed");
            }
        }
        Assert.Equal(calls, histogram.Buckets[^1].Count);
    }

    /// <summary>The label of the first power of two of nanoseconds above a duration known to the microsecond.</summary>
    private static IEnumerable<long> LabelsAround(long usec)
    {
        for (int k = 10; k < 38; k++)
        {
            // The duration was [usec, usec + 1) microseconds: its level is one of the powers of two above that range's ends.
            if ((1L << k) > usec * 1000 && (1L << (k - 1)) <= (usec + 1) * 1000)
                yield return ((1L << k) + (1L << (k - 7)) - 1) / 1000;
        }
    }

    [GeneratedRegex(@"^p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}$")]
    private static partial Regex PercentilesLine();
}
