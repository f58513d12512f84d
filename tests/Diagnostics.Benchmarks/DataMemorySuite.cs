using System.Diagnostics;
using System.Globalization;
using System.Text;

namespace Diagnostics.Benchmarks;

/// <summary>
/// One data set of the datamemory suite: keys <c>&lt;Prefix&gt;&lt;n&gt;</c>, each written by one
/// command that <see cref="Write"/> builds from the suite's seeded PRNG, and what every key must
/// hold afterwards (<see cref="CountCommand"/> answering <see cref="ExpectedCount"/>).
/// </summary>
public sealed record DataMemorySet(string Name, string Description, string Prefix, string CountCommand, long ExpectedCount,
    Action<RespCommandWriter, string, Random> Write);

/// <summary>One server's figures for one data set, read from a fresh instance of it.</summary>
public sealed record DataMemorySample(
    string Server, long? UsedBefore, long? UsedAfterLoad, long? UsedSettled,
    long? ResidentBefore, long? ResidentAfterLoad, long? ResidentSettled, TimeSpan LoadTime,
    string MemoryUsage, long? MemoryUsageBytes, string Encoding)
{
    public long? UsedGrowth => UsedSettled - UsedBefore;
    public long? ResidentGrowth => ResidentSettled - ResidentBefore;
}

/// <summary>All servers' figures for one data set.</summary>
public sealed record DataMemoryRow(DataMemorySet Set, string SampleKey, IReadOnlyList<DataMemorySample> Samples)
{
    public DataMemorySample? Of(string server) => Samples.FirstOrDefault(s => s.Server == server);
}

public sealed record DataMemoryResult(long Keys, int SettleSeconds, IReadOnlyList<DataMemoryRow> Rows, IReadOnlyList<string> CommandLines);

/// <summary>
/// Memory of many small values, the shapes issue 20's compact encodings are for: for each data set,
/// a fresh instance of each server (one at a time, so they never compete for memory) is loaded
/// with N keys through `redis-cli --pipe` (RESP the harness generates from a fixed-seed PRNG, the
/// same bytes for every server), DBSIZE must then be N, and used_memory (INFO memory) and the
/// process's RSS are read right after the load and again after a settle pause (a managed heap
/// may shrink, an allocator may purge). Then MEMORY USAGE and OBJECT ENCODING of one sample key,
/// and its element count, checked. The order of the servers rotates from data set to data set.
/// </summary>
public sealed class DataMemorySuite(BenchmarkOptions options, string redisServer, string redisCli, string? garnetServer, TextWriter progress)
{
    public const int Seed = 20251127;
    private const string Letters = "abcdefghijklmnopqrstuvwxyz";

    /// <summary>The data sets, in report order.</summary>
    public static readonly DataMemorySet[] Sets =
    [
        new("hash", "HSET of 3 short fields: name (5-8 letters), city (4-9 letters), visits (an integer below 100,000)", "hash:", "HLEN", 3,
            (w, key, r) => w.Command("HSET", key, "name", Word(r, 5, 8), "city", Word(r, 4, 9), "visits", r.Next(100_000).ToString(CultureInfo.InvariantCulture))),
        new("set of integers", "SADD of 5 distinct integers below 10,000", "iset:", "SCARD", 5,
            (w, key, r) => w.Command(["SADD", key, .. Distinct(r, () => r.Next(10_000).ToString(CultureInfo.InvariantCulture))])),
        new("set of strings", "SADD of 5 distinct words of 4-8 letters", "sset:", "SCARD", 5,
            (w, key, r) => w.Command(["SADD", key, .. Distinct(r, () => Word(r, 4, 8))])),
        new("sorted set", "ZADD of 5 distinct words of 4-8 letters, integer scores below 10,000", "zset:", "ZCARD", 5,
            (w, key, r) => w.Command(["ZADD", key, .. Distinct(r, () => Word(r, 4, 8)).SelectMany(m => new[] { r.Next(10_000).ToString(CultureInfo.InvariantCulture), m })])),
        new("list", "RPUSH of 5 words of 4-8 letters", "list:", "LLEN", 5,
            (w, key, r) => w.Command("RPUSH", key, Word(r, 4, 8), Word(r, 4, 8), Word(r, 4, 8), Word(r, 4, 8), Word(r, 4, 8))),
        new("string", "SET of 256 random letters", "str:", "STRLEN", BenchmarkOptions.DataSize,
            (w, key, r) => w.Command("SET", key, Word(r, BenchmarkOptions.DataSize, BenchmarkOptions.DataSize))),
    ];

    public DataMemoryResult Run()
    {
        var starts = new List<(string Name, Func<ServerUnderTest> Start)>
        {
            (ServerUnderTest.Ours, () => ServerUnderTest.StartOurs(options.ServerArgs)),
            (ServerUnderTest.Redis, () => ServerUnderTest.StartRedis(redisServer)),
        };
        if (garnetServer is not null)
            starts.Add((ServerUnderTest.Garnet, () => ServerUnderTest.StartGarnet(garnetServer)));
        var commandLines = new Dictionary<string, string>(StringComparer.Ordinal);
        string sampleKey(DataMemorySet set) => Key(set, options.DataMemoryKeys / 2, options.DataMemoryKeys);

        var rows = new List<DataMemoryRow>();
        for (int s = 0; s < Sets.Length; s++)
        {
            var set = Sets[s];
            var samples = new List<DataMemorySample>();
            for (int i = 0; i < starts.Count; i++)
            {
                // Each data set starts one server further along, so no server is always first.
                var (name, start) = starts[(s + i) % starts.Count];
                using var server = start();
                commandLines[name] = server.DisplayCommandLine;
                samples.Add(Measure(server, set, sampleKey(set)));
            }
            // Report order is ours, redis, garnet whatever the order they ran in.
            samples.Sort((a, b) => starts.FindIndex(x => x.Name == a.Server).CompareTo(starts.FindIndex(x => x.Name == b.Server)));
            rows.Add(new DataMemoryRow(set, sampleKey(set), samples));
        }
        return new DataMemoryResult(options.DataMemoryKeys, options.SettleSeconds, rows, starts.Select(s => commandLines[s.Name]).ToArray());
    }

    private DataMemorySample Measure(ServerUnderTest server, DataMemorySet set, string sampleKey)
    {
        long keys = options.DataMemoryKeys;
        using var connection = server.Connect();
        long? usedBefore = ServerInfo.ReadInt64(connection, "memory", ServerInfo.UsedMemory);
        long? residentBefore = server.ResidentBytes();
        progress.WriteLine(string.Create(CultureInfo.InvariantCulture, $"datamemory: loading {keys:N0} keys ({set.Name}) into a fresh {server.Name} with redis-cli --pipe..."));
        var watch = Stopwatch.StartNew();
        RedisCliPipe.Run(redisCli, server, $"{keys:N0} keys ({set.Name})", writer => WriteSet(writer, set, keys));
        watch.Stop();

        var size = connection.Call("DBSIZE");
        if (size.Kind != ':' || size.Integer != keys)
            throw new HarnessException(string.Create(CultureInfo.InvariantCulture, $"after loading {keys:N0} keys ({set.Name}) into {server.Name}, DBSIZE answered {size.Kind}{size.Text}, not {keys}"));
        long? usedAfter = ServerInfo.ReadInt64(connection, "memory", ServerInfo.UsedMemory);
        long? residentAfter = server.ResidentBytes();
        if (options.SettleSeconds > 0)
            Thread.Sleep(TimeSpan.FromSeconds(options.SettleSeconds));
        server.EnsureRunning();
        long? usedSettled = ServerInfo.ReadInt64(connection, "memory", ServerInfo.UsedMemory);
        long? residentSettled = server.ResidentBytes();

        var count = connection.Call(set.CountCommand, sampleKey);
        if (count.Kind != ':' || count.Integer != set.ExpectedCount)
            throw new HarnessException($"{set.CountCommand} {sampleKey} on {server.Name} answered {count.Kind}{count.Text}, not {set.ExpectedCount}");
        var usage = connection.Call("MEMORY", "USAGE", sampleKey);
        string memoryUsage = usage.Kind == ':' ? usage.Integer.ToString("N0", CultureInfo.InvariantCulture) + " B" : $"n/a (answered {Describe(usage)})";
        var encoding = connection.Call("OBJECT", "ENCODING", sampleKey);
        string encodingText = encoding.Kind is '$' or '+' && encoding.Text is not null ? encoding.Text : $"n/a (answered {Describe(encoding)})";

        var sample = new DataMemorySample(server.Name, usedBefore, usedAfter, usedSettled, residentBefore, residentAfter, residentSettled, watch.Elapsed,
            memoryUsage, usage.Kind == ':' ? usage.Integer : null, encodingText);
        progress.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"datamemory: {server.Name} {set.Name}: used_memory {MarkdownReport.Bytes(usedSettled)} ({MarkdownReport.PerKey(sample.UsedGrowth, keys)}/key), RSS {MarkdownReport.Bytes(residentSettled)} ({MarkdownReport.PerKey(sample.ResidentGrowth, keys)}/key), loaded in {watch.Elapsed.TotalSeconds:0.0} s; {sampleKey}: MEMORY USAGE {memoryUsage}, OBJECT ENCODING {encodingText}"));
        return sample;
    }

    /// <summary>Key <paramref name="n"/> of <paramref name="keys"/>: the prefix and n zero-padded to at least 7 digits.</summary>
    public static string Key(DataMemorySet set, long n, long keys)
        => set.Prefix + n.ToString(CultureInfo.InvariantCulture).PadLeft(Math.Max(7, keys.ToString(CultureInfo.InvariantCulture).Length), '0');

    /// <summary>The data set's commands for keys 0..N-1, from a PRNG seeded with <see cref="Seed"/>: the same bytes on every server and run.</summary>
    public static void WriteSet(RespCommandWriter writer, DataMemorySet set, long keys)
    {
        var random = new Random(Seed);
        for (long n = 0; n < keys; n++)
            set.Write(writer, Key(set, n, keys), random);
    }

    private static string Word(Random random, int minLength, int maxLength)
    {
        int length = random.Next(minLength, maxLength + 1);
        return string.Create(length, random, (span, r) =>
        {
            for (int i = 0; i < span.Length; i++)
                span[i] = Letters[r.Next(Letters.Length)];
        });
    }

    /// <summary>Five distinct values from <paramref name="next"/>.</summary>
    private static string[] Distinct(Random random, Func<string> next)
    {
        var values = new List<string>(5);
        while (values.Count < 5)
        {
            string value = next();
            if (!values.Contains(value))
                values.Add(value);
        }
        return [.. values];
    }

    private static string Describe(RespReply reply) => reply.Kind switch
    {
        '$' when reply.Text is null => "a nil bulk string",
        '*' => "an array",
        _ => $"{reply.Kind}{reply.Text}",
    };
}

/// <summary>The datamemory suite's Markdown section.</summary>
public static class DataMemoryReport
{
    public static void Write(StringBuilder md, DataMemoryResult result)
    {
        void Line(string text = "") => md.Append(text).Append('\n');
        var inv = CultureInfo.InvariantCulture;
        bool garnet = result.Rows.Any(r => r.Of(ServerUnderTest.Garnet) is not null);
        Line();
        Line(string.Create(inv, $"### Memory of small values: {result.Keys:N0} keys per data set"));
        Line();
        Line(string.Create(inv, $"For each data set, a fresh instance of each server, one at a time (the order rotating from data set to data set), loaded with {result.Keys:N0} keys `<prefix>%07d` through `redis-cli --pipe`; ") +
             string.Create(inv, $"the RESP is generated by the harness from a PRNG seeded with {DataMemorySuite.Seed}, the same bytes for every server. DBSIZE must then equal the key count. ") +
             string.Create(inv, $"used_memory (INFO memory) and the process's RSS (`/proc/<pid>/status` VmRSS) are read right after the load and again after {result.SettleSeconds} s; ") +
             "per key is the settled value less the fresh server's, over the keys. The sample key (the middle one) has its element count checked, then MEMORY USAGE and OBJECT ENCODING. One measurement per server and data set: memory does not drift from round to round as throughput does.");
        Line();
        foreach (string commandLine in result.CommandLines)
            Line($"    {commandLine}");
        Line();
        Line("| Data set | Command per key |");
        Line("| --- | --- |");
        foreach (var row in result.Rows)
            Line($"| {row.Set.Name} (`{row.Set.Prefix}`) | {row.Set.Description} |");
        Line();
        Line("used_memory (target: ours/redis at or below 1.00):");
        Line();
        Line("| Data set | Ours after load | Ours settled | Redis after load | Redis settled | Ours B/key | Redis B/key | **Ours/Redis** | ≤ 1.00 |");
        Line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: |");
        foreach (var row in result.Rows)
        {
            var ours = row.Of(ServerUnderTest.Ours)!;
            var redis = row.Of(ServerUnderTest.Redis)!;
            string met = ours.UsedGrowth is { } o && redis.UsedGrowth is { } r && r > 0 ? (o <= r ? "yes" : "no") : "n/a";
            Line($"| {row.Set.Name} | {MarkdownReport.Bytes(ours.UsedAfterLoad)} | {MarkdownReport.Bytes(ours.UsedSettled)} | {MarkdownReport.Bytes(redis.UsedAfterLoad)} | {MarkdownReport.Bytes(redis.UsedSettled)} | " +
                 $"{MarkdownReport.PerKey(ours.UsedGrowth, result.Keys)} | {MarkdownReport.PerKey(redis.UsedGrowth, result.Keys)} | **{MarkdownReport.Ratio(ours.UsedGrowth, redis.UsedGrowth)}** | {met} |");
        }
        if (garnet)
        {
            bool garnetUsed = result.Rows.All(r => r.Of(ServerUnderTest.Garnet)?.UsedSettled is not null);
            Line();
            Line(garnetUsed
                ? "Garnet reports used_memory; see the RSS table for it."
                : $"Garnet: used_memory n/a, because its INFO memory, read before and after every load, has no `{ServerInfo.UsedMemory}` field; compare RSS.");
        }
        Line();
        Line("Process RSS (what the machine gives the server; includes the runtime, allocator caches and free space):");
        Line();
        if (garnet)
        {
            Line("| Data set | Ours after load | Ours settled | Redis settled | Garnet settled | Ours B/key | Redis B/key | Garnet B/key | **Ours/Redis** | Ours/Garnet |");
            Line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        }
        else
        {
            Line("| Data set | Ours after load | Ours settled | Redis after load | Redis settled | Ours B/key | Redis B/key | **Ours/Redis** |");
            Line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        }
        foreach (var row in result.Rows)
        {
            var ours = row.Of(ServerUnderTest.Ours)!;
            var redis = row.Of(ServerUnderTest.Redis)!;
            if (row.Of(ServerUnderTest.Garnet) is { } g)
                Line($"| {row.Set.Name} | {MarkdownReport.Bytes(ours.ResidentAfterLoad)} | {MarkdownReport.Bytes(ours.ResidentSettled)} | {MarkdownReport.Bytes(redis.ResidentSettled)} | {MarkdownReport.Bytes(g.ResidentSettled)} | " +
                     $"{MarkdownReport.PerKey(ours.ResidentGrowth, result.Keys)} | {MarkdownReport.PerKey(redis.ResidentGrowth, result.Keys)} | {MarkdownReport.PerKey(g.ResidentGrowth, result.Keys)} | " +
                     $"**{MarkdownReport.Ratio(ours.ResidentGrowth, redis.ResidentGrowth)}** | {MarkdownReport.Ratio(ours.ResidentGrowth, g.ResidentGrowth)} |");
            else
                Line($"| {row.Set.Name} | {MarkdownReport.Bytes(ours.ResidentAfterLoad)} | {MarkdownReport.Bytes(ours.ResidentSettled)} | {MarkdownReport.Bytes(redis.ResidentAfterLoad)} | {MarkdownReport.Bytes(redis.ResidentSettled)} | " +
                     $"{MarkdownReport.PerKey(ours.ResidentGrowth, result.Keys)} | {MarkdownReport.PerKey(redis.ResidentGrowth, result.Keys)} | **{MarkdownReport.Ratio(ours.ResidentGrowth, redis.ResidentGrowth)}** |");
        }
        Line();
        Line("The sample key, and the load time through `redis-cli --pipe`:");
        Line();
        string servers = garnet ? "ours / redis / garnet" : "ours / redis";
        Line($"| Data set | Sample key | MEMORY USAGE {servers} | Ours/Redis | OBJECT ENCODING {servers} | Load s {servers} |");
        Line("| --- | --- | ---: | ---: | --- | ---: |");
        foreach (var row in result.Rows)
        {
            var ours = row.Of(ServerUnderTest.Ours)!;
            var redis = row.Of(ServerUnderTest.Redis)!;
            Line($"| {row.Set.Name} | `{row.SampleKey}` | {string.Join(" / ", row.Samples.Select(s => s.MemoryUsage))} | {MarkdownReport.Ratio(ours.MemoryUsageBytes, redis.MemoryUsageBytes)} | " +
                 $"{string.Join(" / ", row.Samples.Select(s => s.Encoding))} | {string.Join(" / ", row.Samples.Select(s => s.LoadTime.TotalSeconds.ToString("0.0", inv)))} |");
        }
        Line();
        Line("Redis 7.0 holds a small set of strings as a hashtable and every list as a quicklist (the listpack forms for those came in 7.2)." +
             (garnet ? " Garnet's MEMORY USAGE and OBJECT ENCODING are its own answers about its own layout, not Redis's accounting." : ""));
    }
}
