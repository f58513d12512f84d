using System.Globalization;
using System.Net.Sockets;
using System.Text.RegularExpressions;

namespace Diagnostics.Benchmarks;

/// <summary>
/// One start of one server on the generated AOF. <see cref="UntilReady"/> runs from just before
/// the process started until it answered PING with +PONG and DBSIZE with the generated key
/// count; when the count never came (a server that ignores the AOF), it is the time of the
/// first +PONG and <see cref="Complete"/> is false.
/// </summary>
public sealed record AofLoadSample(TimeSpan UntilReady, long KeysLoaded, bool Complete, double? LoggedSeconds);

public sealed class AofLoadResult(GeneratedAof aof)
{
    public long Keys { get; } = aof.Keys;
    public long KeysWithExpiry { get; } = aof.KeysWithExpiry;
    public long Bytes { get; } = aof.Bytes;
    public TimeSpan GenerationTime { get; } = aof.GenerationTime;
    public List<AofLoadSample> Ours { get; } = [];
    public List<AofLoadSample> Redis { get; } = [];
    public string OursCommandLine { get; set; } = "";
    public string RedisCommandLine { get; set; } = "";
}

/// <summary>
/// AOF load time: generates one AOF (<see cref="AofGenerator"/>), checks it with
/// redis-check-aof, then for R rounds starts each server on a fresh copy of it, one server at a
/// time (each holds the whole data set), and times how long it takes to be usable.
/// </summary>
public sealed partial class AofLoadSuite(BenchmarkOptions options, string redisServer, string redisCheckAof, TextWriter progress)
{
    /// <summary>How long a server may keep answering +PONG with a DBSIZE that neither matches nor moves before it counts as done (without the data).</summary>
    private static readonly TimeSpan StableCountGrace = TimeSpan.FromSeconds(2);
    private static readonly TimeSpan PollInterval = TimeSpan.FromMilliseconds(10);

    public AofLoadResult Run()
    {
        long targetBytes = (long)options.AofLoadMegabytes * 1024 * 1024;
        progress.WriteLine(string.Create(CultureInfo.InvariantCulture, $"aof-load: generating a {options.AofLoadMegabytes:N0} MiB AOF..."));
        using var aof = AofGenerator.Generate(targetBytes);
        progress.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"aof-load: {aof.Keys:N0} keys ({aof.KeysWithExpiry:N0} with PXAT), {MarkdownReport.Bytes(aof.Bytes)} in {aof.GenerationTime.TotalSeconds:0.0} s; checking it with redis-check-aof..."));
        AofGenerator.Verify(redisCheckAof, aof);

        var result = new AofLoadResult(aof);
        // Generous: even 5 MiB/s of loading finishes; a server that stalls still fails the run.
        var timeout = TimeSpan.FromSeconds(Math.Max(120, options.AofLoadMegabytes / 5.0));
        string[] persistence = ["--appendonly", "yes"];
        for (int round = 1; round <= options.Rounds; round++)
        {
            foreach (bool ours in new[] { true, false })
            {
                // A fresh copy each start: a server may append to or rewrite the files it loaded.
                var copy = ScratchDirectory.CopyOf(aof.Directory.Path, ours ? "diagnostics-bench-aof-load-ours-" : "diagnostics-bench-aof-load-redis-");
                using var server = ours
                    ? ServerUnderTest.StartOurs(options.ServerArgs, persistence, copy, waitUntilReady: false)
                    : ServerUnderTest.StartRedis(redisServer, persistence, copy, waitUntilReady: false);
                var sample = WaitUntilLoaded(server, aof.Keys, timeout);
                (ours ? result.Ours : result.Redis).Add(sample);
                if (ours)
                    result.OursCommandLine = server.DisplayCommandLine;
                else
                    result.RedisCommandLine = server.DisplayCommandLine;
                string logged = sample.LoggedSeconds is { } s ? string.Create(CultureInfo.InvariantCulture, $"{s:0.000} s") : "no log line";
                string keys = sample.Complete ? "" : string.Create(CultureInfo.InvariantCulture, $"  INCOMPLETE: DBSIZE {sample.KeysLoaded:N0} of {aof.Keys:N0}");
                progress.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"round {round}/{options.Rounds}  AOF load  {server.Name,-5} ready after {sample.UntilReady.TotalSeconds,7:0.000} s  (logged: {logged}){keys}"));
            }
        }
        return result;
    }

    /// <summary>
    /// Polls every 10 ms: connect (a loading server may refuse), PING until +PONG (-LOADING
    /// means not yet), then DBSIZE until it equals the generated key count. A server that answers
    /// +PONG before its data is all in keeps being polled while DBSIZE grows.
    /// </summary>
    private static AofLoadSample WaitUntilLoaded(ServerUnderTest server, long expectedKeys, TimeSpan timeout)
    {
        RespConnection? connection = null;
        TimeSpan? firstPong = null;
        long lastCount = -1;
        DateTime lastChange = DateTime.UtcNow;
        try
        {
            while (true)
            {
                server.EnsureRunning();
                if (server.SinceStart > timeout)
                    throw new HarnessException($"{server.Name} server was not ready with {expectedKeys:N0} keys {timeout.TotalSeconds:0} s after it started (last DBSIZE {lastCount}):\n{server.OutputTail}");
                try
                {
                    connection ??= server.Connect();
                    var pong = connection.Call("PING");
                    if (pong.Kind == '+' && pong.Text == "PONG")
                    {
                        TimeSpan at = server.SinceStart;
                        firstPong ??= at;
                        var size = connection.Call("DBSIZE");
                        if (size.Kind == ':')
                        {
                            if (size.Integer == expectedKeys)
                                return new AofLoadSample(at, size.Integer, true, LoggedSeconds(server));
                            if (size.Integer != lastCount)
                            {
                                lastCount = size.Integer;
                                lastChange = DateTime.UtcNow;
                            }
                            else if (DateTime.UtcNow - lastChange > StableCountGrace)
                            {
                                return new AofLoadSample(firstPong.Value, size.Integer, false, LoggedSeconds(server));
                            }
                        }
                    }
                    else if (!(pong.IsError && pong.Text?.StartsWith("LOADING", StringComparison.Ordinal) == true))
                    {
                        throw new HarnessException($"{server.Name} server answered PING with {pong.Kind}{pong.Text} while starting on the AOF");
                    }
                }
                catch (Exception e) when (e is SocketException or IOException)
                {
                    connection?.Dispose();
                    connection = null;
                }
                Thread.Sleep(PollInterval);
            }
        }
        finally
        {
            connection?.Dispose();
        }
    }

    /// <summary>The server's own figure, from the line Redis logs (and ours mirrors) when the AOF is in.</summary>
    private static double? LoggedSeconds(ServerUnderTest server)
    {
        var match = server.WaitForOutput(LoadedLine(), TimeSpan.FromSeconds(2));
        return match is null ? null : double.Parse(match.Groups["seconds"].Value, NumberStyles.Float, CultureInfo.InvariantCulture);
    }

    [GeneratedRegex(@"DB loaded from append only file: (?<seconds>\d+(?:\.\d+)?) seconds")]
    private static partial Regex LoadedLine();
}
