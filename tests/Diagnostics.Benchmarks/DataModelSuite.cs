using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;

namespace Diagnostics.Benchmarks;

/// <summary>
/// One load of the data-model suite: a redis-benchmark custom command at one pipeline depth, where
/// redis-benchmark puts a random number below <see cref="DataModelSuite.KeySpace"/>, written as
/// 12 zero-padded digits, in place of every __rand_int__ (each one drawn independently).
/// </summary>
public sealed record DataModelLoad(string Name, IReadOnlyList<string> Command, int Pipeline, long Requests)
{
    public string CommandText => string.Join(' ', Command);
}

/// <summary>All rounds of one data-model load on both servers.</summary>
public sealed class DataModelResult(DataModelLoad load)
{
    public DataModelLoad Load { get; } = load;
    public List<DiagnosticsSample> Ours { get; } = [];
    public List<DiagnosticsSample> Redis { get; } = [];
    /// <summary>
    /// What each measured run did, per call of its command (INFO commandstats), read back from the
    /// server after it: for XREADGROUP the entries it delivered (the group's pending entries after a
    /// run that started with none; 10 when no read came back short), for XACK the entries it
    /// acknowledged (pending before less pending after). Empty for the other loads.
    /// </summary>
    public List<double> OursEntriesPerCall { get; } = [];
    public List<double> RedisEntriesPerCall { get; } = [];
}

/// <summary>One data set of the suite's memory comparison, loaded into a fresh instance of each server in turn.</summary>
public sealed record DataModelMemoryResult(string Name, string Description, MemorySample Ours, MemorySample Redis, string OursCheck, string RedisCheck);

/// <summary>What the data-model suite measured and how its data sets were prepared and checked.</summary>
public sealed record DataModelSuiteResult(
    IReadOnlyList<DataModelResult> Loads, bool HyperLogLogMeasured, string HyperLogLogNote, long StreamLength,
    IReadOnlyList<string> Fills, IReadOnlyList<string> Checks, IReadOnlyList<DataModelMemoryResult> Memory,
    string OursCommandLine, string RedisCommandLine);

/// <summary>
/// The data types beyond strings, side by side with redis-server: streams (XADD; a consumer group's
/// XREADGROUP and XACK), bitmaps (SETBIT, BITCOUNT), HyperLogLogs (PFADD, PFCOUNT; only when our
/// server knows PFADD) and geo sets (GEOADD, GEOSEARCH), each a redis-benchmark custom command at
/// pipeline 1 and 30 over <see cref="KeySpace"/> keys of its type filled before the runs. As in the
/// scripts suite, every round runs every load on both servers, the order alternating from round to
/// round, the server's CPU time is read around each run (/proc/&lt;pid&gt;/stat) and medians are
/// reported. Then a memory comparison, one fresh server at a time: a stream of a million entries
/// and a 10M-bit bitmap.
/// <para>
/// redis-benchmark replaces every __rand_int__ independently by 12 zero-padded digits, which shapes
/// the loads. Both servers reject such a number as a bit offset (leading zeros), so SETBIT sets one
/// fixed bit (<see cref="SetBitOffset"/>) in a random key; a coordinate is written
/// <c>__rand_int__e-2</c> (0.00 to 0.99 degrees); a stream ID <c>1__rand_int__-__rand_int__</c>
/// (milliseconds 10^12 + a, sequence b).
/// </para>
/// <para>
/// The consumer group: streams <c>q:&lt;k&gt;</c> hold entries with explicit IDs
/// (10^12 + j / 100)-(j % 100), j = 0, 1, ..., <see cref="DataModelSuiteResult.StreamLength"/> - 1,
/// and group <c>g</c>. Before every XREADGROUP run (warm-up included) the harness destroys and
/// recreates the group at 0 on every stream, so every run starts from the same state on both
/// servers; <c>XREADGROUP GROUP g c COUNT 10 STREAMS q:__rand_int__ &gt;</c> then delivers the
/// next 10 entries of a random stream. The streams are long enough (the expected reads per stream
/// of the longest run, plus six standard deviations, times 10) that no read comes back short; the
/// pending count after the run, which must be 10 per call (INFO commandstats), proves it. Before
/// every XACK run the harness recreates the groups and delivers the first 100 x 100 entries of every stream (one
/// XREADGROUP COUNT 10000 each), so exactly the million IDs the load can name,
/// <c>XACK q:__rand_int__ g 1__rand_int__-__rand_int__</c>, are pending; a run of R requests acks
/// about 10^6 (1 - e^(-R/10^6)) distinct ones, the rest name an entry already acked (both are real
/// work for the server: a lookup in the group's pending list, and a removal on a hit). The acks a
/// run made (pending before less after) are read back and reported for both servers.
/// </para>
/// </summary>
public sealed partial class DataModelSuite(BenchmarkOptions options, string redisServer, string redisBenchmark, string redisCli, TextWriter progress)
{
    /// <summary>Keys of each type, and the range of every __rand_int__ (redis-benchmark's -r).</summary>
    public const long KeySpace = 100;
    public const int ReadCount = 10;
    public const string Group = "g";
    public const string Consumer = "c";
    /// <summary>IDs one stream can be sent in an XACK: 1__rand_int__-__rand_int__.</summary>
    public const long AckIdsPerStream = KeySpace * KeySpace;
    public const long AckPairs = KeySpace * AckIdsPerStream;
    public const long IdBaseMs = 1_000_000_000_000;
    public const int BitmapBits = 1_000_000;
    public const long SetBitOffset = 654_321;
    public const int GeoFillPoints = 5_000;
    public const int GeoRadiusKm = 5;
    public const int HllDenseElements = 20_000;
    public const long MemoryBitmapBits = 10_000_000;
    public const int MemoryBitmapRandomBits = 100_000;
    /// <summary>Seed of every random fill (bitmap bytes, geo positions, the memory bitmap's bits): both servers get the same data.</summary>
    public const int Seed = 20251126;

    public static readonly string[] XaddCommand = ["XADD", "stream:__rand_int__", "*", "field", "value"];
    public static readonly string[] XreadgroupCommand = ["XREADGROUP", "GROUP", Group, Consumer, "COUNT", "10", "STREAMS", "q:__rand_int__", ">"];
    public static readonly string[] XackCommand = ["XACK", "q:__rand_int__", Group, "1__rand_int__-__rand_int__"];
    public static readonly string[] SetbitCommand = ["SETBIT", "bits:__rand_int__", SetBitOffset.ToString(CultureInfo.InvariantCulture), "1"];
    public static readonly string[] BitcountCommand = ["BITCOUNT", "bits:__rand_int__"];
    public static readonly string[] PfaddCommand = ["PFADD", "hll:__rand_int__", "element:__rand_int__"];
    public static readonly string[] PfcountCommand = ["PFCOUNT", "hll:__rand_int__"];
    public static readonly string[] GeoaddCommand = ["GEOADD", "geo:__rand_int__", "__rand_int__e-2", "__rand_int__e-2", "member:__rand_int__"];
    public static readonly string[] GeosearchCommand =
        ["GEOSEARCH", "geo:__rand_int__", "FROMLONLAT", "__rand_int__e-2", "__rand_int__e-2", "BYRADIUS", GeoRadiusKm.ToString(CultureInfo.InvariantCulture), "km", "ASC", "COUNT", "10"];

    private static readonly string[] HyperLogLogLoads = ["PFADD", "PFCOUNT"];

    /// <summary>
    /// Every load at pipeline 1 (<paramref name="requests"/> times the load's scale there) and then
    /// at pipeline 30 (ten times <paramref name="requests"/>, times the load's scale there). The
    /// scales keep each run to a few seconds on 2 busy cores: an XREADGROUP answers ten entries, a
    /// BITCOUNT reads 125,000 bytes, a GEOSEARCH sorts about 30 points, and pipelining speeds those
    /// up far less than it speeds up an XADD or a SETBIT.
    /// </summary>
    public static DataModelLoad[] Loads(long requests)
    {
        (string Name, string[] Command, double ScaleP1, double ScaleP30)[] loads =
        [
            ("XADD", XaddCommand, 1, 1),
            ("XREADGROUP", XreadgroupCommand, 0.5, 0.1),
            ("XACK", XackCommand, 1, 0.5),
            ("SETBIT", SetbitCommand, 1, 1),
            ("BITCOUNT", BitcountCommand, 0.5, 0.1),
            ("PFADD", PfaddCommand, 1, 1),
            ("PFCOUNT", PfcountCommand, 1, 1),
            ("GEOADD", GeoaddCommand, 1, 0.3),
            ("GEOSEARCH", GeosearchCommand, 0.3, 0.05),
        ];
        var list = new List<DataModelLoad>();
        foreach (int pipeline in BenchmarkOptions.Pipelines)
        {
            foreach (var (name, command, scaleP1, scaleP30) in loads)
            {
                double count = pipeline == 1 ? requests * scaleP1 : requests * 10 * scaleP30;
                list.Add(new DataModelLoad(name, command, pipeline, Math.Max(1_000, (long)count)));
            }
        }
        return [.. list];
    }

    /// <summary>A key as redis-benchmark writes it: prefix and 12 zero-padded digits.</summary>
    public static string Key(string prefix, long k) => prefix + k.ToString("D12", CultureInfo.InvariantCulture);

    /// <summary>The ID of entry <paramref name="j"/> of every q: stream.</summary>
    public static string EntryId(long j) => string.Create(CultureInfo.InvariantCulture, $"{IdBaseMs + j / KeySpace}-{j % KeySpace}");

    /// <summary>The command with every __rand_int__ replaced by <paramref name="value"/>, as redis-benchmark would send it.</summary>
    public static string[] Instantiate(IReadOnlyList<string> command, long value)
        => command.Select(a => a.Replace("__rand_int__", value.ToString("D12", CultureInfo.InvariantCulture), StringComparison.Ordinal)).ToArray();

    /// <summary>
    /// Entries each q: stream needs so that no XREADGROUP of <paramref name="loads"/> comes back
    /// short: the reads one stream expects in the longest run, plus six standard deviations
    /// (binomial), times 10; at least the 10,000 entries the XACK load names.
    /// </summary>
    public static long StreamLength(IEnumerable<DataModelLoad> loads)
    {
        long longest = loads.Where(l => l.Name == "XREADGROUP").Select(l => l.Requests).DefaultIfEmpty(0).Max();
        double perStream = longest / (double)KeySpace;
        long needed = (long)Math.Ceiling(ReadCount * (perStream + 6 * Math.Sqrt(perStream))) + ReadCount;
        return Math.Max(AckIdsPerStream, needed);
    }

    public DataModelSuiteResult Run()
    {
        var loads = Loads(options.DataModelRequests).ToList();
        long streamLength = StreamLength(loads);
        var fills = new List<string>();
        var checks = new List<string>();
        List<DataModelResult> results;
        bool hyperLogLog;
        string hyperLogLogNote;
        string oursCommandLine, redisCommandLine;
        using (var ours = ServerUnderTest.StartOurs(options.ServerArgs))
        using (var redis = ServerUnderTest.StartRedis(redisServer))
        {
            oursCommandLine = ours.DisplayCommandLine;
            redisCommandLine = redis.DisplayCommandLine;
            progress.WriteLine($"datamodel: ours on port {ours.Port}, redis on port {redis.Port}");
            if (!KnowsCommand(redis, "PFADD"))
                throw new HarnessException("redis-server answered COMMAND INFO pfadd with no command");
            hyperLogLog = KnowsCommand(ours, "PFADD");
            hyperLogLogNote = hyperLogLog
                ? "our server knows PFADD (COMMAND INFO pfadd), so PFADD and PFCOUNT were measured"
                : "PFADD and PFCOUNT were not measured: our server answered COMMAND INFO pfadd with no command (it does not have HyperLogLogs)";
            progress.WriteLine($"datamodel: {hyperLogLogNote}");
            if (!hyperLogLog)
                loads.RemoveAll(l => HyperLogLogLoads.Contains(l.Name));
            results = loads.Select(l => new DataModelResult(l)).ToList();

            var fillTimes = new Dictionary<string, List<string>>(StringComparer.Ordinal);
            foreach (var server in new[] { ours, redis })
            {
                foreach (var (name, fill) in Fills(streamLength, hyperLogLog))
                {
                    progress.WriteLine($"datamodel: filling {server.Name}: {name} (not measured)...");
                    var watch = Stopwatch.StartNew();
                    RedisCliPipe.Run(redisCli, server, name, fill);
                    if (!fillTimes.TryGetValue(name, out var times))
                        fillTimes[name] = times = [];
                    times.Add(string.Create(CultureInfo.InvariantCulture, $"{server.Name} {watch.Elapsed.TotalSeconds:0.0} s"));
                }
            }
            fills.AddRange(fillTimes.Select(f => $"{f.Key} (redis-cli --pipe: {string.Join(", ", f.Value)})"));

            var oursFacts = Check(ours, hyperLogLog);
            var redisFacts = Check(redis, hyperLogLog);
            foreach (var (what, redisValue) in redisFacts)
            {
                string oursValue = oursFacts[what];
                string line = oursValue == redisValue ? $"{what}: {redisValue} on both" : $"{what}: **ours {oursValue}, redis {redisValue}**";
                checks.Add(line);
                progress.WriteLine($"datamodel: check {line}");
            }

            foreach (var server in new[] { ours, redis })
            {
                progress.WriteLine($"datamodel: warm-up of {server.Name} (not measured)...");
                foreach (var result in results)
                {
                    Prepare(server, result.Load);
                    RedisBenchmark.RunCommand(redisBenchmark, server.Port, result.Load.Command, result.Load.Pipeline, Math.Max(1_000, result.Load.Requests / 5), KeySpace);
                }
                server.EnsureRunning();
            }

            for (int round = 1; round <= options.Rounds; round++)
            {
                // Odd rounds start with ours, even ones with redis.
                var order = round % 2 == 1 ? new[] { ours, redis } : new[] { redis, ours };
                foreach (var result in results)
                {
                    foreach (var server in order)
                    {
                        Prepare(server, result.Load);
                        long? callsBefore = Calls(server, result.Load.Name);
                        var sample = Measure(server, result.Load);
                        double? entries = EntriesPerCall(server, result.Load, callsBefore);
                        (server.IsOurs ? result.Ours : result.Redis).Add(sample);
                        if (entries is { } e)
                            (server.IsOurs ? result.OursEntriesPerCall : result.RedisEntriesPerCall).Add(e);
                        progress.WriteLine(string.Create(CultureInfo.InvariantCulture,
                            $"round {round}/{options.Rounds}  {result.Load.Name,-10} -P {result.Load.Pipeline,-2}  {server.Name,-5} {sample.RequestsPerSecond,12:N0} rps  {sample.CpuMicrosPerRequest,7:0.000} us CPU/req  p50 {sample.P50Ms:0.000} ms  p99 {sample.P99Ms:0.000} ms") +
                            (entries is { } n ? string.Create(CultureInfo.InvariantCulture, $"  {n:0.000} entries/call") : ""));
                    }
                }
            }
        }

        var memory = new List<DataModelMemoryResult>
        {
            MeasureMemory("stream",
                string.Create(CultureInfo.InvariantCulture, $"`XADD s * field value`, {options.DataModelStreamEntries:N0} times: one stream of {options.DataModelStreamEntries:N0} entries"),
                writer =>
                {
                    for (long i = 0; i < options.DataModelStreamEntries; i++)
                        writer.Command("XADD", "s", "*", "field", "value");
                },
                connection => string.Create(CultureInfo.InvariantCulture, $"XLEN s = {Integer(connection, "XLEN", "s"):N0}")),
            MeasureMemory("bitmap",
                string.Create(CultureInfo.InvariantCulture, $"`SETBIT bitmap {MemoryBitmapBits - 1} 1`, then `SETBIT bitmap <offset> 1` at {MemoryBitmapRandomBits:N0} random offsets below it: one {MemoryBitmapBits:N0}-bit ({MemoryBitmapBits / 8:N0}-byte) bitmap"),
                writer =>
                {
                    var random = new Random(Seed);
                    writer.Command("SETBIT", "bitmap", (MemoryBitmapBits - 1).ToString(CultureInfo.InvariantCulture), "1");
                    for (int i = 0; i < MemoryBitmapRandomBits; i++)
                        writer.Command("SETBIT", "bitmap", random.NextInt64(MemoryBitmapBits).ToString(CultureInfo.InvariantCulture), "1");
                },
                connection => string.Create(CultureInfo.InvariantCulture, $"STRLEN bitmap = {Integer(connection, "STRLEN", "bitmap"):N0}, BITCOUNT bitmap = {Integer(connection, "BITCOUNT", "bitmap"):N0}")),
        };

        return new DataModelSuiteResult(results, hyperLogLog, hyperLogLogNote, streamLength, fills, checks, memory, oursCommandLine, redisCommandLine);
    }

    /// <summary>The data sets the loads run on, each as the commands that build it on an empty server.</summary>
    private static List<(string Name, Action<RespCommandWriter> Fill)> Fills(long streamLength, bool hyperLogLog)
    {
        var inv = CultureInfo.InvariantCulture;
        var fills = new List<(string, Action<RespCommandWriter>)>
        {
            (string.Create(inv, $"{KeySpace} streams q:<k> of {streamLength:N0} entries with IDs (10^12 + j / 100)-(j % 100), group {Group} at 0 on each"), writer =>
            {
                for (long k = 0; k < KeySpace; k++)
                {
                    string key = Key("q:", k);
                    for (long j = 0; j < streamLength; j++)
                        writer.Command("XADD", key, EntryId(j), "field", "value");
                    writer.Command("XGROUP", "CREATE", key, Group, "0");
                }
            }),
            (string.Create(inv, $"{KeySpace} bitmaps bits:<k> of {BitmapBits:N0} bits, SET to {BitmapBits / 8:N0} random bytes each"), writer =>
            {
                var random = new Random(Seed);
                var value = new byte[BitmapBits / 8];
                for (long k = 0; k < KeySpace; k++)
                {
                    random.NextBytes(value);
                    writer.Command("SET", Key("bits:", k), value);
                }
            }),
            (string.Create(inv, $"{KeySpace} geo sets geo:<k> of {GeoFillPoints:N0} points point:<n> and the load's {KeySpace} members member:<a>, uniformly random in [0, 1) x [0, 1) degrees"), writer =>
            {
                var random = new Random(Seed);
                for (long k = 0; k < KeySpace; k++)
                {
                    string key = Key("geo:", k);
                    var args = new List<string>();
                    void Flush()
                    {
                        if (args.Count == 0)
                            return;
                        writer.Command(["GEOADD", key, .. args]);
                        args.Clear();
                    }
                    void Add(string member)
                    {
                        args.Add(random.NextDouble().ToString("R", inv));
                        args.Add(random.NextDouble().ToString("R", inv));
                        args.Add(member);
                        if (args.Count >= 3 * 500)
                            Flush();
                    }
                    for (int n = 0; n < GeoFillPoints; n++)
                        Add("point:" + n.ToString(inv));
                    for (long a = 0; a < KeySpace; a++)
                        Add(Key("member:", a));
                    Flush();
                }
            }),
        };
        if (hyperLogLog)
        {
            fills.Add((string.Create(inv, $"{KeySpace} HyperLogLogs hll:<k>: the even ones dense ({HllDenseElements:N0} elements fill:<k>:<n>), all of them holding the load's {KeySpace} elements element:<a>, so the odd ones stay sparse"), writer =>
            {
                for (long k = 0; k < KeySpace; k++)
                {
                    string key = Key("hll:", k);
                    if (k % 2 == 0)
                    {
                        for (int start = 0; start < HllDenseElements; start += 1_000)
                            writer.Command(["PFADD", key, .. Enumerable.Range(start, Math.Min(1_000, HllDenseElements - start)).Select(n => string.Create(inv, $"fill:{k}:{n}"))]);
                    }
                    writer.Command(["PFADD", key, .. Enumerable.Range(0, (int)KeySpace).Select(a => Key("element:", a))]);
                }
            }));
        }
        return fills;
    }

    /// <summary>Puts the server in the state a load's run starts from: for the consumer group's loads, the group recreated (and for XACK, the IDs it names delivered).</summary>
    private void Prepare(ServerUnderTest server, DataModelLoad load)
    {
        switch (load.Name)
        {
            case "XREADGROUP":
                ResetGroups(server);
                break;
            case "XACK":
                ResetGroups(server);
                DeliverAckRange(server);
                long pending = Pending(server);
                if (pending != AckPairs)
                    throw new HarnessException($"{server.Name}: after delivering the first {AckIdsPerStream:N0} entries of each of {KeySpace} streams, {pending:N0} entries are pending, not {AckPairs:N0}");
                break;
        }
    }

    /// <summary>
    /// For the consumer group's loads, what the run just measured did per call of its command;
    /// null for the other loads. The calls are the growth of INFO commandstats' count over the run
    /// (at -P 30 redis-benchmark sends a few pipelines more than -n), or -n when the server has none.
    /// </summary>
    private double? EntriesPerCall(ServerUnderTest server, DataModelLoad load, long? callsBefore)
    {
        if (load.Name is not ("XREADGROUP" or "XACK"))
            return null;
        long calls = Calls(server, load.Name) - callsBefore ?? load.Requests;
        switch (load.Name)
        {
            case "XREADGROUP":
                long delivered = Pending(server);
                if (delivered != ReadCount * calls)
                    progress.WriteLine(string.Create(CultureInfo.InvariantCulture, $"datamodel: WARNING {server.Name} delivered {delivered:N0} entries in {calls:N0} XREADGROUPs, not {ReadCount * calls:N0}: reads came back short"));
                return delivered / (double)calls;
            default:
                return (AckPairs - Pending(server)) / (double)calls;
        }
    }

    /// <summary>Calls of a command so far (INFO commandstats), for the consumer group's loads; null for the others or when the server does not count them.</summary>
    private static long? Calls(ServerUnderTest server, string command)
    {
        if (command is not ("XREADGROUP" or "XACK"))
            return null;
        using var connection = server.Connect();
        var fields = ServerInfo.Read(connection, "commandstats");
        if (fields is null || !fields.TryGetValue("cmdstat_" + command.ToLowerInvariant(), out string? stats))
            return null;
        var match = CallsField().Match(stats);
        return match.Success ? long.Parse(match.Groups[1].Value, CultureInfo.InvariantCulture) : null;
    }

    private void ResetGroups(ServerUnderTest server)
        => RedisCliPipe.Run(redisCli, server, "recreating the consumer groups", writer =>
        {
            for (long k = 0; k < KeySpace; k++)
            {
                writer.Command("XGROUP", "DESTROY", Key("q:", k), Group);
                writer.Command("XGROUP", "CREATE", Key("q:", k), Group, "0");
            }
        });

    private void DeliverAckRange(ServerUnderTest server)
        => RedisCliPipe.Run(redisCli, server, "delivering the XACK load's IDs", writer =>
        {
            for (long k = 0; k < KeySpace; k++)
                writer.Command("XREADGROUP", "GROUP", Group, Consumer, "COUNT", AckIdsPerStream.ToString(CultureInfo.InvariantCulture), "STREAMS", Key("q:", k), ">");
        });

    /// <summary>Entries pending in group g over all q: streams (XPENDING's summary count).</summary>
    private static long Pending(ServerUnderTest server)
    {
        using var connection = server.Connect();
        long total = 0;
        for (long k = 0; k < KeySpace; k++)
        {
            var reply = connection.Call("XPENDING", Key("q:", k), Group);
            if (reply.Items is not { Count: 4 } items || items[0].Kind != ':')
                throw new HarnessException($"XPENDING {Key("q:", k)} {Group} on {server.Name} answered {Describe(reply)}");
            total += items[0].Integer;
        }
        return total;
    }

    private DiagnosticsSample Measure(ServerUnderTest server, DataModelLoad load)
    {
        TimeSpan before = server.CpuTime();
        var sample = RedisBenchmark.RunCommand(redisBenchmark, server.Port, load.Command, load.Pipeline, load.Requests, KeySpace);
        TimeSpan after = server.CpuTime();
        server.EnsureRunning();
        return new DiagnosticsSample(sample.RequestsPerSecond, sample.P50Ms, sample.P99Ms, (after - before).TotalMicroseconds / load.Requests);
    }

    /// <summary>Whether COMMAND INFO names the command (a server without it answers a nil entry).</summary>
    private static bool KnowsCommand(ServerUnderTest server, string command)
    {
        using var connection = server.Connect();
        var reply = connection.Call("COMMAND", "INFO", command);
        return !reply.IsError && reply.Items is { Count: 1 } items && items[0].Items is { Count: > 0 };
    }

    /// <summary>
    /// Every load's command once by hand, with __rand_int__ as redis-benchmark would fill it in,
    /// and its reply checked: a server answering an error, or the wrong thing, quickly must not look
    /// fast. Returns what both servers must agree on (same data, same commands), for the report.
    /// </summary>
    private Dictionary<string, string> Check(ServerUnderTest server, bool hyperLogLog)
    {
        var facts = new Dictionary<string, string>(StringComparer.Ordinal);
        var inv = CultureInfo.InvariantCulture;
        using var connection = server.Connect();
        RespReply Call(string[] command, Func<RespReply, bool> valid, string expected)
        {
            var reply = connection.Call(command);
            if (!valid(reply))
                throw new HarnessException($"{string.Join(' ', command)} on {server.Name} answered {Describe(reply)}; expected {expected}");
            return reply;
        }

        Call(Instantiate(XaddCommand, 7), r => r.Kind == '$' && r.Text is { } id && StreamId().IsMatch(id), "a new entry's ID");

        ResetGroups(server);
        var read = Call(Instantiate(XreadgroupCommand, 7),
            r => r.Items is [{ Items: [_, { Items: { Count: ReadCount } entries }] }]
                 && entries.All(e => e.Items is [{ Text: not null }, { Items: [{ Text: "field" }, { Text: "value" }] }]),
            $"one stream with {ReadCount} entries of field value");
        string[] ids = read.Items![0].Items![1].Items!.Select(e => e.Items![0].Text!).ToArray();
        string[] expectedIds = Enumerable.Range(0, ReadCount).Select(j => EntryId(j)).ToArray();
        if (!ids.SequenceEqual(expectedIds))
            throw new HarnessException($"the first XREADGROUP > on {Key("q:", 7)} on {server.Name} delivered {string.Join(' ', ids)}, not {string.Join(' ', expectedIds)}");
        facts["first XREADGROUP > of q:000000000007"] = $"{ids[0]} .. {ids[^1]}";

        Prepare(server, new DataModelLoad("XACK", XackCommand, 1, 1));
        string[] ack = Instantiate(XackCommand, 7);
        Call(ack, r => r.Kind == ':' && r.Integer == 1, ":1 (the ID was pending)");
        Call(ack, r => r.Kind == ':' && r.Integer == 0, ":0 (the ID was just acked)");
        facts["XACK of a pending ID, then again"] = "1, then 0";

        var setbit = Call(Instantiate(SetbitCommand, 7), r => r.Kind == ':' && r.Integer is 0 or 1, "the bit's old value");
        Call(["GETBIT", Key("bits:", 7), SetBitOffset.ToString(inv)], r => r.Kind == ':' && r.Integer == 1, ":1");
        facts[$"SETBIT bits:000000000007 {SetBitOffset} 1 (old bit)"] = setbit.Integer.ToString(inv);
        var count = Call(Instantiate(BitcountCommand, 7), r => r.Kind == ':' && r.Integer > BitmapBits * 0.45 && r.Integer < BitmapBits * 0.55, "about half the bitmap's bits");
        facts["BITCOUNT bits:000000000007"] = count.Integer.ToString("N0", inv);

        Call(Instantiate(GeoaddCommand, 7), r => r.Kind == ':' && r.Integer == 0, ":0 (member:000000000007 exists and moved)");
        facts["GEOADD of an existing member"] = "0 (moved)";
        var found = Call(Instantiate(GeosearchCommand, 50), r => r.Items is { Count: 10 } members && members.All(m => m.Kind == '$' && m.Text is not null), "10 members");
        facts[$"GEOSEARCH from (0.5, 0.5), {GeoRadiusKm} km, nearest 10"] = string.Join(' ', found.Items!.Select(m => m.Text));

        if (hyperLogLog)
        {
            Call(Instantiate(PfaddCommand, 7), r => r.Kind == ':' && r.Integer is 0 or 1, ":0 or :1");
            foreach (long k in (long[])[6, 7])
            {
                double expected = (k % 2 == 0 ? HllDenseElements : 0) + KeySpace;
                var estimate = Call(Instantiate(PfcountCommand, k), r => r.Kind == ':' && Math.Abs(r.Integer - expected) <= expected * 0.05, string.Create(inv, $"about {expected:N0}"));
                var encoding = connection.Call("GETRANGE", Key("hll:", k), "0", "4");
                string shape = encoding.Text is { Length: 5 } header && header.StartsWith("HYLL", StringComparison.Ordinal)
                    ? header[4] switch { '\0' => "dense", '\u0001' => "sparse", _ => "unknown encoding" }
                    : "not a Redis HLL string";
                facts[$"PFCOUNT {Key("hll:", k)} ({(k % 2 == 0 ? "dense fill" : "sparse fill")})"] = string.Create(inv, $"{estimate.Integer:N0}, {shape}");
            }
        }
        return facts;
    }

    /// <summary>Loads one data set into a fresh instance of ours, then of redis (one at a time), reading used_memory and RSS before and after.</summary>
    private DataModelMemoryResult MeasureMemory(string name, string description, Action<RespCommandWriter> load, Func<RespConnection, string> check)
    {
        (MemorySample Sample, string Check) Measure(Func<ServerUnderTest> start)
        {
            using var server = start();
            using var connection = server.Connect();
            long? usedBefore = ServerInfo.ReadInt64(connection, "memory", ServerInfo.UsedMemory);
            long? residentBefore = server.ResidentBytes();
            progress.WriteLine($"datamodel memory: loading the {name} into a fresh {server.Name} with redis-cli --pipe...");
            var watch = Stopwatch.StartNew();
            RedisCliPipe.Run(redisCli, server, $"the {name} memory data set", load);
            watch.Stop();
            long? usedAfter = ServerInfo.ReadInt64(connection, "memory", ServerInfo.UsedMemory);
            var sample = new MemorySample(server.Name, usedBefore, usedAfter, residentBefore, server.ResidentBytes(), watch.Elapsed);
            string result = check(connection);
            progress.WriteLine($"datamodel memory: {server.Name} {name}: used_memory +{MarkdownReport.Bytes(sample.UsedMemoryGrowth)}, RSS {MarkdownReport.Bytes(sample.ResidentAfter)}; {result}");
            return (sample, result);
        }

        var ours = Measure(() => ServerUnderTest.StartOurs(options.ServerArgs));
        var redis = Measure(() => ServerUnderTest.StartRedis(redisServer));
        return new DataModelMemoryResult(name, description, ours.Sample, redis.Sample, ours.Check, redis.Check);
    }

    private static long Integer(RespConnection connection, params string[] command)
    {
        var reply = connection.Call(command);
        if (reply.Kind != ':')
            throw new HarnessException($"{string.Join(' ', command)} answered {Describe(reply)}");
        return reply.Integer;
    }

    private static string Describe(RespReply reply) => reply.Kind switch
    {
        '*' when reply.Items is null => "a nil array",
        '*' => $"an array of {reply.Items.Count}",
        '$' when reply.Text is null => "a nil bulk string",
        _ => $"{reply.Kind}{(reply.Text is { Length: > 200 } t ? t[..200] + "..." : reply.Text)}",
    };

    [GeneratedRegex(@"(?:^|,)calls=(\d+)")]
    private static partial Regex CallsField();

    [GeneratedRegex(@"^\d+-\d+$")]
    private static partial Regex StreamId();
}
