using System.Globalization;
using System.Text;

namespace Diagnostics.Benchmarks;

/// <summary>
/// What the write that makes a big hash table double costs: a fresh instance of each server is
/// filled with <see cref="BenchmarkOptions.RehashMembers"/> members of one hash, one set, one
/// sorted set, or as many keys (`redis-cli --pipe`, one member per command), with the slow log
/// catching every command slower than 1 ms. A table that rehashes all at once shows the doubling
/// (at 2^k members) as one command that moves millions of entries; an incremental one spreads it
/// over the writes that follow. Reported: the slowest command and the commands over 10 ms, from
/// each server's own SLOWLOG (its in-server duration, without waiting for the socket).
/// </summary>
public sealed class RehashSuite(BenchmarkOptions options, string redisServer, string redisCli, TextWriter progress)
{
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    private sealed record Structure(string Name, string Command, Action<RespCommandWriter, long> Write);

    private static readonly Structure[] Structures =
    [
        new("hash", "HSET big f:<n> 1", (w, n) => w.Command("HSET", "big", "f:" + n.ToString(Inv), "1")),
        new("set", "SADD big m:<n>", (w, n) => w.Command("SADD", "big", "m:" + n.ToString(Inv))),
        new("sorted set", "ZADD big <n> m:<n>", (w, n) => w.Command("ZADD", "big", n.ToString(Inv), "m:" + n.ToString(Inv))),
        new("keyspace", "SET k:<n> 1", (w, n) => w.Command("SET", "k:" + n.ToString(Inv), "1")),
    ];

    private sealed record Fill(double WorstMs, string WorstCommand, int Over10Ms, double LoadSeconds);

    public string Run()
    {
        var results = new Dictionary<(string, string), List<Fill>>();
        for (int round = 0; round < options.Rounds; round++)
            foreach (string kind in round % 2 == 0 ? new[] { ServerUnderTest.Ours, ServerUnderTest.Redis } : [ServerUnderTest.Redis, ServerUnderTest.Ours])
                foreach (var structure in Structures)
                {
                    var fill = Measure(kind, structure);
                    (results.TryGetValue((kind, structure.Name), out var list) ? list : results[(kind, structure.Name)] = []).Add(fill);
                    progress.WriteLine(string.Create(Inv, $"rehash round {round + 1} {kind} {structure.Name}: {options.RehashMembers:N0} members in {fill.LoadSeconds:0.0} s, slowest {fill.WorstMs:0.0} ms ({fill.WorstCommand}), {fill.Over10Ms} over 10 ms"));
                }

        var md = new StringBuilder();
        md.Append("\n## Rehashing\n\n");
        md.Append(string.Create(Inv, $"A fresh instance of each server filled with {options.RehashMembers:N0} members of one structure through `redis-cli --pipe` (one member per command), `slowlog-log-slower-than 1000`, `slowlog-max-len 1024`; the slowest command and the count over 10 ms from each server's SLOWLOG. {options.Rounds} round(s), servers alternating; medians.\n\n"));
        md.Append("| Structure | command | ours slowest ms | redis slowest ms | ours > 10 ms | redis > 10 ms | ours worst command |\n| --- | --- | --- | --- | --- | --- | --- |\n");
        foreach (var structure in Structures)
        {
            var ours = results[(ServerUnderTest.Ours, structure.Name)];
            var redis = results[(ServerUnderTest.Redis, structure.Name)];
            md.Append(string.Create(Inv, $"| {structure.Name} | `{structure.Command}` | {Statistics.Median(ours.Select(f => f.WorstMs)):0.0} | {Statistics.Median(redis.Select(f => f.WorstMs)):0.0} | {Statistics.Median(ours.Select(f => (double)f.Over10Ms)):0} | {Statistics.Median(redis.Select(f => (double)f.Over10Ms)):0} | `{ours.MaxBy(f => f.WorstMs)!.WorstCommand}` |\n"));
        }
        return md.ToString();
    }

    private Fill Measure(string kind, Structure structure)
    {
        using var server = kind == ServerUnderTest.Ours ? ServerUnderTest.StartOurs(options.ServerArgs) : ServerUnderTest.StartRedis(redisServer);
        using (var c = server.Connect())
        {
            Expect(c.Call("CONFIG", "SET", "slowlog-log-slower-than", "1000"), server);
            Expect(c.Call("CONFIG", "SET", "slowlog-max-len", "1024"), server);
            Expect(c.Call("SLOWLOG", "RESET"), server);
        }
        var clock = System.Diagnostics.Stopwatch.StartNew();
        RedisCliPipe.Run(redisCli, server, structure.Name, writer =>
        {
            for (long n = 0; n < options.RehashMembers; n++)
                structure.Write(writer, n);
        });
        double loadSeconds = clock.Elapsed.TotalSeconds;
        using var probe = server.Connect();
        var log = probe.Call("SLOWLOG", "GET", "1024");
        if (log.Items is null)
            throw new HarnessException($"SLOWLOG GET on {server.Name} answered {log.Kind}{log.Text}");
        double worstMicros = 0;
        string worstCommand = "-";
        int over10 = 0;
        foreach (var entry in log.Items)
        {
            // An entry: id, unix time, duration in microseconds, the arguments, client address, client name.
            long micros = entry.Items![2].Integer;
            if (micros > 10_000)
                over10++;
            if (micros > worstMicros)
            {
                worstMicros = micros;
                worstCommand = string.Join(' ', entry.Items[3].Items!.Take(3).Select(a => a.Text));
            }
        }
        return new Fill(worstMicros / 1000.0, worstCommand, over10, loadSeconds);
    }

    private static void Expect(RespReply reply, ServerUnderTest server)
    {
        if (reply.IsError)
            throw new HarnessException($"{server.Name}: {reply.Text}");
    }
}
