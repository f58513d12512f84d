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

    public int Rounds { get; private set; } = DefaultRounds;
    /// <summary>Requests per redis-benchmark run at pipeline 1.</summary>
    public long Requests { get; private set; } = DefaultRequests;
    /// <summary>Requests per redis-benchmark run at pipeline 30 (a pipelined run is ~10x faster).</summary>
    public long PipelinedRequests { get; private set; } = DefaultPipelinedRequests;
    /// <summary>Distinct keys loaded into each server for the memory comparison.</summary>
    public long MemoryKeys { get; private set; } = DefaultMemoryKeys;
    public bool Quick { get; private set; }
    /// <summary>The redis-benchmark tests to run: "set", "get" or both.</summary>
    public IReadOnlyList<string> Tests { get; private set; } = ["set", "get"];
    public IReadOnlyList<string> ServerArgs { get; private set; } = [];
    public string? OutputPath { get; private set; }
    public bool SkipMemory { get; private set; }
    public bool ShowHelp { get; private set; }

    public const int Clients = 50;
    public const int DataSize = 256;
    public const long KeySpace = 1_000_000;
    public static readonly int[] Pipelines = [1, 30];

    public const string Usage = """
        Diagnostics.Benchmarks: our server against Debian's redis-server, side by side, with redis-benchmark.

        Usage: dotnet run -c Release --project tests/Diagnostics.Benchmarks -- [options]

          --rounds R               rounds per test and pipeline, servers alternating ours/redis (default 5)
          --requests N             requests per run at pipeline 1 (default 200000); also sets
                                   pipeline 30 to 10*N unless --pipelined-requests is given
          --pipelined-requests N   requests per run at pipeline 30 (default 2000000)
          --keys N                 distinct 256-byte keys loaded for the memory comparison (default 1000000)
          --no-memory              skip the memory comparison
          --quick                  smoke check: 2 rounds, 20000/200000 requests, 50000 keys
          --only set|get           run one redis-benchmark test instead of both
          --server-args "..."      extra arguments for our server, e.g. "--execution-mode inline" or "--shards 1"
          --out PATH               also write the Markdown report to PATH
          --help                   this text

        Needs redis-server, redis-benchmark and redis-cli: apt-get install -y redis-server redis-tools
        """;

    /// <summary>Parses the arguments; returns the problem as text, or null when they are valid.</summary>
    public string? Parse(string[] args)
    {
        bool requestsGiven = false, pipelinedGiven = false, roundsGiven = false, keysGiven = false;
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
                    SkipMemory = true;
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
        }
        if (!pipelinedGiven && (requestsGiven || Quick))
            PipelinedRequests = Requests * 10;
        return null;
    }

    public long RequestsFor(int pipeline) => pipeline == 1 ? Requests : PipelinedRequests;

    private static bool TryPositive(string? text, out long value)
        => long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out value) && value > 0;
}
