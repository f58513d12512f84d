using System.Globalization;

namespace Diagnostics.Benchmarks;

/// <summary>Command-line options of the harness; <see cref="Usage"/> documents each one.</summary>
public sealed class BenchmarkOptions
{
    public const int DefaultRounds = 5;
    // Sized so a full run (2 servers x 2 tests x 2 pipelines x 5 rounds, plus the 1M-key memory
    // load) takes about 3-4 minutes on 2 cores, leaving room for a slower build of our server.
    public const long DefaultRequests = 200_000;
    public const long DefaultPipelinedRequests = 2_000_000;
    public const long DefaultMemoryKeys = 1_000_000;
    // 1M SETs make ~300 MB of AOF per run: long enough for Redis's automatic rewrites (from 64 MB)
    // to happen inside the measured runs, short enough for 2 policies x 2 servers x 5 rounds.
    public const long DefaultAofRequests = 1_000_000;
    public const int DefaultAofLoadMegabytes = 1024;
    // ~3-5 s per run at -P 1 (and at -P 30 with 10x) on 2 busy cores, so that 5 rounds of 5 loads
    // on 3 servers stay under 10 minutes.
    public const long DefaultDiagnosticsRequests = 200_000;
    public const long DefaultStudioRequests = 200_000;
    // A script run costs several times a GET: 100,000 at -P 1 and 1,000,000 at -P 30 take a few
    // seconds each on 2 busy cores, so 3 rounds of 4 loads on 2 servers take about 5 minutes.
    public const long DefaultScriptRequests = 100_000;
    // Scaled per load and pipeline (DataModelSuite.Loads): runs of 1-3 seconds each, so 3 rounds
    // of 18 loads on 2 servers, the fills and the memory comparison take under 10 minutes on 2
    // busy cores.
    public const long DefaultDataModelRequests = 50_000;
    public const long DefaultDataModelStreamEntries = 1_000_000;
    // Six data sets of a million keys, one fresh server at a time: about 1-2 GB per server at
    // most, and a few seconds of redis-cli --pipe each.
    public const long DefaultDataMemoryKeys = 1_000_000;
    public const int DefaultSettleSeconds = 5;

    public const string ThroughputSuite = "throughput";
    public const string MemorySuite = "memory";
    public const string AofWriteSuite = "aof-write";
    public const string AofLoadSuite = "aof-load";
    public const string DiagnosticsSuite = "diagnostics";
    public const string StudioSuite = "studio";
    public const string MonitorSuite = "monitor";
    public const string InfoSuite = "info";
    public const string ScriptsSuite = "scripts";
    public const string DataModelSuite = "datamodel";
    public const string DataMemorySuite = "datamemory";
    public const string ReplicationSuite = "replication";
    public const string RehashSuite = "rehash";
    public const string AllocatorSuite = "allocator";
    public const string TlsSuite = "tls";
    public static readonly string[] AllSuites = [ThroughputSuite, MemorySuite, AofWriteSuite, AofLoadSuite, DiagnosticsSuite, StudioSuite, MonitorSuite, InfoSuite, ScriptsSuite, DataModelSuite, DataMemorySuite, ReplicationSuite, RehashSuite, AllocatorSuite, TlsSuite];
    /// <summary>
    /// What runs without --suites: everything but the diagnostics and studio suites, which run for
    /// several minutes of their own (and a browser) and are asked for by name.
    /// </summary>
    public static readonly string[] DefaultSuites = [ThroughputSuite, MemorySuite, AofWriteSuite, AofLoadSuite];
    /// <summary>The suites that run Garnet beside redis-server when --garnet is given.</summary>
    public static readonly string[] GarnetSuites = [ThroughputSuite, MemorySuite, ScriptsSuite, DataMemorySuite];
    /// <summary>The appendfsync policies the AOF write suite compares, in report order.</summary>
    public static readonly string[] AofFsyncPolicies = ["always", "everysec"];

    public int Rounds { get; private set; } = DefaultRounds;
    /// <summary>Requests per redis-benchmark run at pipeline 1.</summary>
    public long Requests { get; private set; } = DefaultRequests;
    /// <summary>Requests per redis-benchmark run at pipeline 30 (a pipelined run is ~10x faster).</summary>
    public long PipelinedRequests { get; private set; } = DefaultPipelinedRequests;
    /// <summary>Distinct keys loaded into each server for the memory comparison.</summary>
    public long MemoryKeys { get; private set; } = DefaultMemoryKeys;
    /// <summary>Requests per redis-benchmark SET -P 30 run against servers writing an AOF.</summary>
    public long AofRequests { get; private set; } = DefaultAofRequests;
    /// <summary>Size of the generated AOF the load suite starts both servers on.</summary>
    public int AofLoadMegabytes { get; private set; } = DefaultAofLoadMegabytes;
    /// <summary>Requests per diagnostics-suite run at pipeline 1; pipeline 30 runs 10x, the mixed load this many of each command.</summary>
    public long DiagnosticsRequests { get; private set; } = DefaultDiagnosticsRequests;
    /// <summary>Whether the diagnostics suite scrapes the shipped server during its measured runs, as a monitoring system would.</summary>
    public bool DiagnosticsWatched { get; private set; } = true;
    /// <summary>Requests per studio-suite run at pipeline 1; pipeline 30 runs 10x.</summary>
    public long StudioRequests { get; private set; } = DefaultStudioRequests;
    /// <summary>Requests per scripts-suite run at pipeline 1; pipeline 30 runs 10x.</summary>
    public long ScriptRequests { get; private set; } = DefaultScriptRequests;
    /// <summary>Requests per data-model run at pipeline 1, before each load's scale; pipeline 30 runs 10x.</summary>
    public long DataModelRequests { get; private set; } = DefaultDataModelRequests;
    /// <summary>Size of the data set the replication suite's full sync carries.</summary>
    public long ReplicationSyncMegabytes { get; private set; } = 1024;
    /// <summary>Members the rehash suite puts in each structure (10M: the doubling at 2^23 is inside).</summary>
    public long RehashMembers { get; private set; } = 10_000_000;
    /// <summary>Entries of the stream the data-model suite's memory comparison loads.</summary>
    public long DataModelStreamEntries { get; private set; } = DefaultDataModelStreamEntries;
    /// <summary>Keys of each data set the datamemory suite loads.</summary>
    public long DataMemoryKeys { get; private set; } = DefaultDataMemoryKeys;
    /// <summary>Seconds the datamemory suite waits after a load before reading memory a second time.</summary>
    public int SettleSeconds { get; private set; } = DefaultSettleSeconds;
    /// <summary>Whether Microsoft Garnet runs as a second peer beside redis-server (--garnet).</summary>
    public bool Garnet { get; private set; }
    /// <summary>A garnet-server executable to use instead of the one the harness installs (--garnet-path).</summary>
    public string? GarnetPath { get; private set; }
    /// <summary>The suites to run, in <see cref="AllSuites"/> order.</summary>
    public IReadOnlyList<string> Suites { get; private set; } = DefaultSuites;
    public bool Quick { get; private set; }
    /// <summary>The redis-benchmark tests to run: "set", "get" or both.</summary>
    public IReadOnlyList<string> Tests { get; private set; } = ["set", "get"];
    public IReadOnlyList<string> ServerArgs { get; private set; } = [];
    public string? OutputPath { get; private set; }
    public bool SkipMemory => !Runs(MemorySuite);
    public bool ShowHelp { get; private set; }

    /// <summary>redis-benchmark's default test list beyond SET and GET, in its own order (LPOP after LPUSH, ZPOPMIN after ZADD).</summary>
    public static readonly string[] TypeTests =
        ["lpush", "rpush", "lpop", "rpop", "sadd", "hset", "spop", "zadd", "zpopmin", "lrange_100", "lrange_300", "lrange_500", "lrange_600", "mset"];

    public static readonly string[] KnownTests = ["set", "get", "incr", .. TypeTests];

    public const int Clients = 50;
    public const int DataSize = 256;
    public const long KeySpace = 1_000_000;
    public static readonly int[] Pipelines = [1, 30];

    public const string Usage = """
        Diagnostics.Benchmarks: our server against Debian's redis-server, side by side, with redis-benchmark.

        Usage: dotnet run -c Release --project tests/Diagnostics.Benchmarks -- [options]

          --rounds R               rounds of every measurement (test and pipeline, fsync policy, AOF load,
                                   diagnostics load), servers alternating within each round (default 5)
          --requests N             requests per run at pipeline 1 (default 200000); also sets
                                   pipeline 30 to 10*N unless --pipelined-requests is given
          --pipelined-requests N   requests per run at pipeline 30 (default 2000000)
          --keys N                 distinct 256-byte keys loaded for the memory comparison (default 1000000)
          --no-memory              skip the memory comparison (same as leaving memory out of --suites)
          --suites LIST            comma-separated suites to run (default throughput,memory,aof-write,aof-load):
                                     throughput   SET/GET at -P 1 and -P 30, servers side by side
                                     memory       used_memory and RSS after loading --keys keys
                                     aof-write    SET -P 30 with --appendonly yes, appendfsync always then everysec
                                     aof-load     start-up time on a generated Redis 7 multi-part AOF
                                     diagnostics  cost of the diagnostics: our server as shipped (scraped once a
                                                  second) against --latency-tracking no --diagnostics-sampler no
                                                  --hotkey-sample-period 0,
                                                  redis-server as reference; throughput and CPU time per request
                                     studio       cost of the studio: our server with 3 headless chromium windows on
                                                  the dashboard against none, redis-server as reference; and each
                                                  window's main-thread time per second (needs chromium, chromium-driver)
                                     scripts      EVALSHA of a small read (GET) and write (INCR) Lua script, loaded with
                                                  SCRIPT LOAD, at -P 1 and -P 30, servers side by side; CPU time per request
                                     datamodel    streams (XADD; XREADGROUP and XACK of a consumer group), bitmaps (SETBIT,
                                                  BITCOUNT on 1M-bit bitmaps), HyperLogLogs (PFADD, PFCOUNT; when our server
                                                  knows PFADD) and geo sets (GEOADD, GEOSEARCH) at -P 1 and -P 30, servers side
                                                  by side; CPU time per request; then memory of a 1M-entry stream and a 10M-bit
                                                  bitmap, one fresh server at a time
                                     datamemory   memory of --memory-keys keys of each small data set (hashes of 3 fields, sets of
                                                  5 integers, sets of 5 strings, sorted sets of 5, lists of 5, 256-byte strings),
                                                  one fresh server at a time: used_memory, RSS, bytes per key, MEMORY USAGE and
                                                  OBJECT ENCODING of a sample key
                                     rehash       the slowest command while one hash, set, sorted set or keyspace grows to
                                                  --rehash-members members (each server's SLOWLOG)
                                     allocator    our server on each C allocator (glibc, jemalloc, mimalloc) beside redis-server:
                                                  redis-benchmark -t set,get,lpush,lpop,sadd,hset,zadd,zpopmin -P 30 -r 100000
                                                  -n --pipelined-requests, --rounds rounds (medians); used_memory and RSS after
                                                  loading --keys 256-byte strings; the tracked allocator's own microbenchmark
                                                  from 2 threads
                                     tls          redis-benchmark --tls (SET, GET) at -P 1 and -P 30 against redis-server with TLS, side by
                                                  side, and each server's plain port in the same rounds: ours/redis under TLS and TLS/plain
          --aof-requests N         requests per aof-write run (default 1000000)
          --aof-load-mb M          size of the AOF generated for aof-load, in MiB (default 1024)
          --diagnostics-requests N requests per diagnostics run at pipeline 1 (default 200000); pipeline 30
                                   runs 10*N, the mixed set,get,incr,mset load N of each command
          --diagnostics-unwatched  the shipped server is not scraped during its measured runs (the default scrapes
                                   /metrics and /api/history once a second): the switches' cost alone
          --studio-requests N      requests per studio run at pipeline 1 (default 200000); pipeline 30 runs 10*N
          --script-requests N      requests per scripts run at pipeline 1 (default 100000); pipeline 30 runs 10*N
          --datamodel-requests N   requests per datamodel run at pipeline 1 (default 50000), and 10*N at pipeline 30,
                                   each scaled by the load's cost (e.g. GEOSEARCH 0.3*N at -P 1, 0.5*N at -P 30)
          --datamodel-stream-entries N
                                   entries of the stream in the datamodel memory comparison (default 1000000)
          --memory-keys N          keys of each datamemory data set (default 1000000)
          --settle-seconds S       seconds the datamemory suite waits after a load before reading memory again (default 5)
          --garnet                 also run Microsoft Garnet (garnet-server, installed on first use with
                                   `dotnet tool install garnet-server` into .tools/garnet, which git ignores) as a second
                                   peer in the throughput, memory, scripts and datamemory suites; the report
                                   also gets what Garnet answered to each other suite's needs (its capabilities)
          --garnet-path PATH       the garnet-server executable to run instead (implies --garnet)
          --replication-sync-mb N  megabytes the replication suite's full sync carries (default 1024)
          --rehash-members N       members of the hash, set, sorted set and keyspace the rehash suite fills (default 10000000)
          --quick                  smoke check: 2 rounds, 20000/200000 requests, 50000 keys,
                                   100000 aof-write requests, a 64 MiB AOF, 20000 diagnostics, studio and script requests,
                                   10000 datamodel requests, a 100000-entry stream and 50000 datamemory keys
          --only set|get           run one redis-benchmark test instead of both
          --tests LIST             the throughput suite's redis-benchmark tests, comma-separated (-t names:
                                   set, get, lpush, rpush, lpop, rpop, sadd, hset, spop, zadd, zpopmin,
                                   lrange_100, lrange_300, lrange_500, lrange_600, mset, incr), or "types" for
                                   redis-benchmark's default list beyond SET/GET (LPUSH ... MSET)
          --server-args "..."      extra arguments for our server, e.g. "--execution-mode inline" or "--shards 1"
          --out PATH               also write the Markdown report to PATH
          --help                   this text

        Needs redis-server, redis-benchmark, redis-cli and redis-check-aof: apt-get install -y redis-server redis-tools
        --garnet installs garnet-server 2.2.8 from NuGet on first use (dotnet tool install); later runs reuse it.
        """;

    /// <summary>Parses the arguments; returns the problem as text, or null when they are valid.</summary>
    public string? Parse(string[] args)
    {
        bool requestsGiven = false, pipelinedGiven = false, roundsGiven = false, keysGiven = false, aofRequestsGiven = false, aofLoadGiven = false;
        bool diagnosticsRequestsGiven = false;
        bool studioRequestsGiven = false;
        bool scriptRequestsGiven = false;
        bool dataModelRequestsGiven = false, dataModelStreamEntriesGiven = false, replicationSyncGiven = false, rehashMembersGiven = false;
        bool noMemory = false, memoryKeysGiven = false;
        for (int i = 0; i < args.Length; i++)
        {
            string name = args[i];
            string? Value()
            {
                if (i + 1 >= args.Length)
                    return null;
                return args[++i];
            }
            switch (name)
            {
                case "--help" or "-h":
                    ShowHelp = true;
                    break;
                case "--quick":
                    Quick = true;
                    break;
                case "--no-memory":
                    noMemory = true;
                    break;
                case "--suites":
                    string[] suites = (Value() ?? "").Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
                    if (suites.Length == 0)
                        return $"--suites needs a comma-separated list of: {string.Join(',', AllSuites)}";
                    foreach (string suite in suites)
                    {
                        if (!AllSuites.Contains(suite, StringComparer.OrdinalIgnoreCase))
                            return $"unknown suite '{suite}' (the suites are {string.Join(',', AllSuites)})";
                    }
                    Suites = AllSuites.Where(s => suites.Contains(s, StringComparer.OrdinalIgnoreCase)).ToArray();
                    break;
                case "--aof-requests":
                    if (!TryPositive(Value(), out long aofRequests))
                        return "--aof-requests needs a positive whole number";
                    AofRequests = aofRequests;
                    aofRequestsGiven = true;
                    break;
                case "--aof-load-mb":
                    if (!TryPositive(Value(), out long megabytes) || megabytes > 1024 * 1024)
                        return "--aof-load-mb needs a whole number of MiB between 1 and 1048576";
                    AofLoadMegabytes = (int)megabytes;
                    aofLoadGiven = true;
                    break;
                case "--diagnostics-requests":
                    if (!TryPositive(Value(), out long diagnosticsRequests))
                        return "--diagnostics-requests needs a positive whole number";
                    DiagnosticsRequests = diagnosticsRequests;
                    diagnosticsRequestsGiven = true;
                    break;
                case "--diagnostics-unwatched":
                    DiagnosticsWatched = false;
                    break;
                case "--studio-requests":
                    if (!TryPositive(Value(), out long studioRequests))
                        return "--studio-requests needs a positive whole number";
                    StudioRequests = studioRequests;
                    studioRequestsGiven = true;
                    break;
                case "--script-requests":
                    if (!TryPositive(Value(), out long scriptRequests))
                        return "--script-requests needs a positive whole number";
                    ScriptRequests = scriptRequests;
                    scriptRequestsGiven = true;
                    break;
                case "--datamodel-requests":
                    if (!TryPositive(Value(), out long dataModelRequests))
                        return "--datamodel-requests needs a positive whole number";
                    DataModelRequests = dataModelRequests;
                    dataModelRequestsGiven = true;
                    break;
                case "--replication-sync-mb":
                    if (!TryPositive(Value(), out long syncMegabytes))
                        return "--replication-sync-mb needs a positive whole number";
                    ReplicationSyncMegabytes = syncMegabytes;
                    replicationSyncGiven = true;
                    break;
                case "--rehash-members":
                    if (!TryPositive(Value(), out long rehashMembers))
                        return "--rehash-members needs a positive whole number";
                    RehashMembers = rehashMembers;
                    rehashMembersGiven = true;
                    break;
                case "--datamodel-stream-entries":
                    if (!TryPositive(Value(), out long streamEntries))
                        return "--datamodel-stream-entries needs a positive whole number";
                    DataModelStreamEntries = streamEntries;
                    dataModelStreamEntriesGiven = true;
                    break;
                case "--memory-keys":
                    if (!TryPositive(Value(), out long memoryKeys))
                        return "--memory-keys needs a positive whole number";
                    DataMemoryKeys = memoryKeys;
                    memoryKeysGiven = true;
                    break;
                case "--settle-seconds":
                    if (!long.TryParse(Value(), NumberStyles.None, CultureInfo.InvariantCulture, out long settle) || settle > 600)
                        return "--settle-seconds needs a whole number between 0 and 600";
                    SettleSeconds = (int)settle;
                    break;
                case "--garnet":
                    Garnet = true;
                    break;
                case "--garnet-path":
                    GarnetPath = Value();
                    if (string.IsNullOrWhiteSpace(GarnetPath))
                        return "--garnet-path needs the path of a garnet-server executable";
                    Garnet = true;
                    break;
                case "--rounds":
                    if (!TryPositive(Value(), out long rounds) || rounds > 1000)
                        return "--rounds needs a whole number between 1 and 1000";
                    Rounds = (int)rounds;
                    roundsGiven = true;
                    break;
                case "--requests":
                    if (!TryPositive(Value(), out long requests))
                        return "--requests needs a positive whole number";
                    Requests = requests;
                    requestsGiven = true;
                    break;
                case "--pipelined-requests":
                    if (!TryPositive(Value(), out long pipelined))
                        return "--pipelined-requests needs a positive whole number";
                    PipelinedRequests = pipelined;
                    pipelinedGiven = true;
                    break;
                case "--keys":
                    if (!TryPositive(Value(), out long keys))
                        return "--keys needs a positive whole number";
                    MemoryKeys = keys;
                    keysGiven = true;
                    break;
                case "--only":
                    string? only = Value()?.ToLowerInvariant();
                    if (only is not ("set" or "get"))
                        return "--only takes set or get";
                    Tests = [only];
                    break;
                case "--tests":
                    string? list = Value()?.ToLowerInvariant();
                    if (list is null)
                        return "--tests needs a comma-separated list of redis-benchmark tests, or types";
                    string[] tests = list == "types" ? TypeTests : list.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
                    foreach (string test in tests)
                        if (!KnownTests.Contains(test))
                            return $"unknown test '{test}' (known: {string.Join(',', KnownTests)})";
                    Tests = tests;
                    break;
                case "--server-args":
                    string? serverArgs = Value();
                    if (serverArgs is null)
                        return "--server-args needs a value, e.g. --server-args \"--shards 1\"";
                    ServerArgs = serverArgs.Split(' ', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
                    if (ServerArgs.Contains("--port", StringComparer.OrdinalIgnoreCase))
                        return "--server-args must not set --port: the harness picks a free port";
                    break;
                case "--out":
                    OutputPath = Value();
                    if (string.IsNullOrWhiteSpace(OutputPath))
                        return "--out needs a file path";
                    break;
                default:
                    return $"unknown option '{name}'";
            }
        }

        if (Quick)
        {
            if (!roundsGiven) Rounds = 2;
            if (!requestsGiven) Requests = 20_000;
            if (!keysGiven) MemoryKeys = 50_000;
            if (!aofRequestsGiven) AofRequests = 100_000;
            if (!aofLoadGiven) AofLoadMegabytes = 64;
            if (!diagnosticsRequestsGiven) DiagnosticsRequests = 20_000;
            if (!studioRequestsGiven) StudioRequests = 20_000;
            if (!scriptRequestsGiven) ScriptRequests = 20_000;
            if (!dataModelRequestsGiven) DataModelRequests = 10_000;
            if (!dataModelStreamEntriesGiven) DataModelStreamEntries = 100_000;
            if (!replicationSyncGiven) ReplicationSyncMegabytes = 64;
            if (!rehashMembersGiven) RehashMembers = 300_000;
            if (!memoryKeysGiven) DataMemoryKeys = 50_000;
        }
        if (noMemory)
            Suites = Suites.Where(s => s != MemorySuite).ToArray();
        if (Suites.Count == 0)
            return "no suite left to run (--no-memory removed the only one)";
        if (!pipelinedGiven && (requestsGiven || Quick))
            PipelinedRequests = Requests * 10;
        return null;
    }

    public bool Runs(string suite) => Suites.Contains(suite);

    public long RequestsFor(int pipeline) => pipeline == 1 ? Requests : PipelinedRequests;

    private static bool TryPositive(string? text, out long value)
        => long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out value) && value > 0;
}
