using System.Globalization;
using System.Runtime.InteropServices;
using System.Text.RegularExpressions;
using Diagnostics.Benchmarks;

// A child process of the allocator suite: the tracked allocator's microbenchmark on one backend.
if (args is ["allocator-micro", string backendName])
    return AllocatorMicrobenchmark.Run(backendName);

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

// Servers are child processes and the AOF suites fill temp folders: never leave either behind
// an interrupted run.
// .NET does not raise ProcessExit for SIGTERM here, so each stopping signal gets its own
// handler; the signal's default action (ending the harness) follows it.
using var onInterrupt = PosixSignalRegistration.Create(PosixSignal.SIGINT, _ => HarnessCleanUp.OnSignal());
using var onTerminate = PosixSignalRegistration.Create(PosixSignal.SIGTERM, _ => HarnessCleanUp.OnSignal());
using var onHangUp = PosixSignalRegistration.Create(PosixSignal.SIGHUP, _ => HarnessCleanUp.OnSignal());
AppDomain.CurrentDomain.ProcessExit += (_, _) => HarnessCleanUp.Run();

var progress = Console.Error;
try
{
    string redisServer = ExternalTools.Require("redis-server");
    string redisBenchmark = ExternalTools.Require("redis-benchmark");
    string redisCli = ExternalTools.Require("redis-cli");
    string? redisCheckAof = options.Runs(BenchmarkOptions.AofLoadSuite) ? ExternalTools.Require("redis-check-aof") : null;
    ServerUnderTest.OurServerDll();
    var machine = MachineInfo.Collect(redisServer, redisBenchmark);
    string? garnetServer = null;
    IReadOnlyList<GarnetCapability>? garnetCapabilities = null;
    if (options.Garnet)
    {
        garnetServer = GarnetTool.Require(options.GarnetPath, progress);
        machine = machine with { Garnet = ExternalTools.Version(garnetServer) };
        garnetCapabilities = GarnetProbe.Run(garnetServer, progress);
        var without = options.Suites.Where(s => !BenchmarkOptions.GarnetSuites.Contains(s)).ToArray();
        if (without.Length > 0)
            progress.WriteLine($"note: --garnet: the {string.Join(", ", without)} suite(s) run without Garnet (it is wired into {string.Join(", ", BenchmarkOptions.GarnetSuites)})");
    }

    progress.WriteLine(string.Create(CultureInfo.InvariantCulture,
        $"{options.Rounds} round(s); suites {string.Join(',', options.Suites)}; throughput: tests {string.Join(',', options.Tests)}, {options.Requests:N0} requests at -P 1, {options.PipelinedRequests:N0} at -P 30; ") +
        string.Create(CultureInfo.InvariantCulture,
        $"memory: {options.MemoryKeys:N0} keys; datamemory: {options.DataMemoryKeys:N0} keys per data set; aof-write: {options.AofRequests:N0} requests; aof-load: {options.AofLoadMegabytes:N0} MiB; ") +
        string.Create(CultureInfo.InvariantCulture,
        $"diagnostics: {options.DiagnosticsRequests:N0} requests at -P 1, {options.DiagnosticsRequests * 10:N0} at -P 30; ") +
        string.Create(CultureInfo.InvariantCulture, $"studio: {options.StudioRequests:N0} requests at -P 1, {options.StudioRequests * 10:N0} at -P 30; ") +
        string.Create(CultureInfo.InvariantCulture, $"scripts: {options.ScriptRequests:N0} requests at -P 1, {options.ScriptRequests * 10:N0} at -P 30; ") +
        string.Create(CultureInfo.InvariantCulture, $"datamodel: {options.DataModelRequests:N0} requests at -P 1, {options.DataModelRequests * 10:N0} at -P 30 (scaled per load), a {options.DataModelStreamEntries:N0}-entry stream"));

    List<ThroughputResult>? throughput = null;
    AllocationProbe? probe = null;
    string oursCommandLine, oursSettings;
    string? redisCommandLine = null, garnetCommandLine = null;
    if (options.Runs(BenchmarkOptions.ThroughputSuite))
    {
        using var ours = ServerUnderTest.StartOurs(options.ServerArgs);
        using var redis = ServerUnderTest.StartRedis(redisServer);
        using var garnet = garnetServer is null ? null : ServerUnderTest.StartGarnet(garnetServer);
        using var probeConnection = ours.Connect();
        oursCommandLine = ours.DisplayCommandLine;
        redisCommandLine = Regex.Replace(redis.CommandLine, @" --dir \S+", "");
        garnetCommandLine = garnet?.DisplayCommandLine;
        oursSettings = DescribeOurServer(probeConnection, ours);
        progress.WriteLine($"ours: {oursCommandLine} on port {ours.Port} ({oursSettings}); redis: port {redis.Port}" + (garnet is null ? "" : $"; garnet: port {garnet.Port}"));
        probe = AllocationProbe.TryCreate(probeConnection);
        if (probe is null)
            progress.WriteLine($"note: our INFO memory has no {ServerInfo.ManagedAllocatedBytes} field, so managed B/op will read n/a");
        throughput = new ThroughputSuite(options, redisBenchmark, progress).Run(ours, redis, garnet, probe);
    }
    else
    {
        // The report's header names our server's shards and mode whatever the suites.
        using var ours = ServerUnderTest.StartOurs(options.ServerArgs);
        using var connection = ours.Connect();
        oursCommandLine = ours.DisplayCommandLine;
        oursSettings = DescribeOurServer(connection, ours);
        progress.WriteLine($"ours: {oursCommandLine} ({oursSettings})");
    }

    MemoryResult? memory = options.SkipMemory ? null : MemoryComparison.Run(options, redisServer, redisCli, garnetServer, progress);
    bool oursHasUsedMemory = memory?.Ours.UsedMemoryAfter is not null;
    if (memory is not null && !oursHasUsedMemory)
        progress.WriteLine($"note: our INFO memory has no {ServerInfo.UsedMemory} field, so our used_memory reads n/a");

    List<AofWriteResult>? aofWrite = options.Runs(BenchmarkOptions.AofWriteSuite)
        ? new AofWriteSuite(options, redisServer, redisBenchmark, progress).Run()
        : null;
    AofLoadResult? aofLoad = redisCheckAof is not null
        ? new AofLoadSuite(options, redisServer, redisCheckAof, progress).Run()
        : null;
    DiagnosticsSuiteResult? diagnostics = options.Runs(BenchmarkOptions.DiagnosticsSuite)
        ? new DiagnosticsSuite(options, redisServer, redisBenchmark, progress).Run()
        : null;

    StudioSuiteResult? studio = options.Runs(BenchmarkOptions.StudioSuite)
        ? new StudioSuite(options, redisServer, redisBenchmark, progress).Run()
        : null;

    MonitorSuiteResult? monitor = options.Runs(BenchmarkOptions.MonitorSuite)
        ? new MonitorSuite(options, redisServer, redisBenchmark, progress).Run()
        : null;

    ScriptSuiteResult? scripts = options.Runs(BenchmarkOptions.ScriptsSuite)
        ? new ScriptSuite(options, redisServer, redisBenchmark, progress, garnetServer).Run()
        : null;

    DataModelSuiteResult? dataModel = options.Runs(BenchmarkOptions.DataModelSuite)
        ? new DataModelSuite(options, redisServer, redisBenchmark, redisCli, progress).Run()
        : null;

    DataMemoryResult? dataMemory = options.Runs(BenchmarkOptions.DataMemorySuite)
        ? new DataMemorySuite(options, redisServer, redisCli, garnetServer, progress).Run()
        : null;
    garnetCommandLine ??= dataMemory?.CommandLines.FirstOrDefault(c => c.StartsWith("garnet-server", StringComparison.Ordinal));

    string? infoUnderLoad = options.Runs(BenchmarkOptions.InfoSuite)
        ? new InfoLatencySuite(options, redisServer, redisBenchmark, progress).Run()
        : null;
    string? replication = options.Runs(BenchmarkOptions.ReplicationSuite)
        ? new ReplicationSuite(options, redisServer, redisBenchmark, progress).Run()
        : null;
    string? rehash = options.Runs(BenchmarkOptions.RehashSuite)
        ? new RehashSuite(options, redisServer, redisCli, progress).Run()
        : null;
    string? allocators = options.Runs(BenchmarkOptions.AllocatorSuite)
        ? new AllocatorSuite(options, redisServer, redisBenchmark, redisCli, progress).Run()
        : null;

    string? tls = options.Runs(BenchmarkOptions.TlsSuite)
        ? new TlsSuite(options, redisServer, redisBenchmark, progress).Run()
        : null;

    var run = new BenchmarkRun(oursCommandLine, oursSettings, redisCommandLine, throughput, probe, memory, oursHasUsedMemory, aofWrite, aofLoad, diagnostics, studio, monitor, scripts, dataModel,
        dataMemory, garnetCommandLine, garnetCapabilities);
    string report = MarkdownReport.Build(machine, options, run) + infoUnderLoad + replication + rehash + allocators + tls;
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
catch (Exception) when (HarnessCleanUp.Interrupted)
{
    // Servers and directories vanished under the main thread on purpose.
    Console.Error.WriteLine("benchmark interrupted; servers stopped and temporary directories deleted");
    return 130;
}
catch (HarnessException e)
{
    Console.Error.WriteLine($"benchmark failed: {e.Message}");
    return 1;
}
catch (Exception e)
{
    // Caught rather than left unhandled, which would skip the clean-up below.
    Console.Error.WriteLine($"benchmark failed: {e}");
    return 1;
}
finally
{
    HarnessCleanUp.Run();
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
