using System.Globalization;
using System.Text.RegularExpressions;
using Diagnostics.Benchmarks;

var options = new BenchmarkOptions();
string? problem = options.Parse(args);
if (problem is not null)
{
    Console.Error.WriteLine($"error: {problem}\n");
    Console.Error.WriteLine(BenchmarkOptions.Usage);
    return 2;
}
if (options.ShowHelp)
{
    Console.WriteLine(BenchmarkOptions.Usage);
    return 0;
}

// Servers are child processes: never leave one running behind an interrupted run.
Console.CancelKeyPress += (_, _) => ServerUnderTest.StopAll();
AppDomain.CurrentDomain.ProcessExit += (_, _) => ServerUnderTest.StopAll();

var progress = Console.Error;
try
{
    string redisServer = ExternalTools.Require("redis-server");
    string redisBenchmark = ExternalTools.Require("redis-benchmark");
    string redisCli = ExternalTools.Require("redis-cli");
    ServerUnderTest.OurServerDll();
    var machine = MachineInfo.Collect(redisServer, redisBenchmark);

    progress.WriteLine(string.Create(CultureInfo.InvariantCulture,
        $"{options.Rounds} round(s); tests {string.Join(',', options.Tests)}; {options.Requests:N0} requests at -P 1, {options.PipelinedRequests:N0} at -P 30; memory: {(options.SkipMemory ? "skipped" : options.MemoryKeys.ToString("N0", CultureInfo.InvariantCulture) + " keys")}"));

    List<ThroughputResult> throughput;
    AllocationProbe? probe;
    string oursCommandLine, oursSettings, redisCommandLine;
    using (var ours = ServerUnderTest.StartOurs(options.ServerArgs))
    using (var redis = ServerUnderTest.StartRedis(redisServer))
    using (var probeConnection = ours.Connect())
    {
        oursCommandLine = ours.CommandLine.Replace(ServerUnderTest.OurServerDll(), "Diagnostics.Server.dll", StringComparison.Ordinal);
        redisCommandLine = Regex.Replace(redis.CommandLine, @" --dir \S+", "");
        oursSettings = DescribeOurServer(probeConnection, ours);
        progress.WriteLine($"ours: {oursCommandLine} on port {ours.Port} ({oursSettings}); redis: port {redis.Port}");
        probe = AllocationProbe.TryCreate(probeConnection);
        if (probe is null)
            progress.WriteLine($"note: our INFO memory has no {ServerInfo.ManagedAllocatedBytes} field, so managed B/op will read n/a");
        throughput = new ThroughputSuite(options, redisBenchmark, progress).Run(ours, redis, probe);
    }

    MemoryResult? memory = options.SkipMemory ? null : MemoryComparison.Run(options, redisServer, redisCli, progress);
    bool oursHasUsedMemory = memory?.Ours.UsedMemoryAfter is not null;
    if (memory is not null && !oursHasUsedMemory)
        progress.WriteLine($"note: our INFO memory has no {ServerInfo.UsedMemory} field, so our used_memory reads n/a");

    string report = MarkdownReport.Build(machine, options, oursCommandLine, oursSettings, redisCommandLine, throughput, probe, memory, oursHasUsedMemory);
    Console.WriteLine();
    Console.Write(report);
    if (options.OutputPath is not null)
    {
        string path = Path.GetFullPath(options.OutputPath);
        Directory.CreateDirectory(Path.GetDirectoryName(path)!);
        File.WriteAllText(path, report);
        progress.WriteLine($"report written to {path}");
    }
    return 0;
}
catch (HarnessException e)
{
    Console.Error.WriteLine($"benchmark failed: {e.Message}");
    return 1;
}
finally
{
    ServerUnderTest.StopAll();
}

// Shards and execution mode, from CONFIG GET when the server answers it, else from its start-up log line.
static string DescribeOurServer(RespConnection connection, ServerUnderTest ours)
{
    string? shards = ServerInfo.ConfigGet(connection, "shards");
    string? mode = ServerInfo.ConfigGet(connection, "execution-mode");
    if (shards is not null && mode is not null)
        return $"{shards} shards, {mode} mode";
    var match = Regex.Match(ours.OutputTail, @"(\d+) shards \((\w+)\)");
    return match.Success ? $"{match.Groups[1].Value} shards, {match.Groups[2].Value.ToLowerInvariant()} mode" : "shards and mode not reported";
}
