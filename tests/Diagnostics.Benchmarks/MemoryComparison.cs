using System.Diagnostics;
using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;

namespace Diagnostics.Benchmarks;

/// <summary>One server's memory after loading the same keys.</summary>
public sealed record MemorySample(string Server, long? UsedMemoryBefore, long? UsedMemoryAfter, long? ResidentBefore, long? ResidentAfter, TimeSpan LoadTime)
{
    public long? UsedMemoryGrowth => UsedMemoryAfter - UsedMemoryBefore;
    public long? ResidentGrowth => ResidentAfter - ResidentBefore;
}

/// <summary>The memory comparison; <see cref="Garnet"/> is null without --garnet.</summary>
public sealed record MemoryResult(long Keys, int ValueSize, MemorySample Ours, MemorySample Redis, MemorySample? Garnet = null);

/// <summary>
/// Loads exactly N distinct keys (SET key:%07d with a 256-byte value) into a fresh instance of
/// each server through `redis-cli --pipe`, then reads used_memory from INFO memory and the
/// process's resident size. One server at a time (ours, redis, then garnet with --garnet), so they
/// never compete for memory.
/// </summary>
public static partial class MemoryComparison
{
    public static MemoryResult Run(BenchmarkOptions options, string redisServer, string redisCli, string? garnetServer, TextWriter progress)
    {
        MemorySample Measure(Func<ServerUnderTest> start)
        {
            using var server = start();
            using var connection = server.Connect();
            long? usedBefore = ServerInfo.ReadInt64(connection, "memory", ServerInfo.UsedMemory);
            long? residentBefore = server.ResidentBytes();
            progress.WriteLine(string.Create(CultureInfo.InvariantCulture, $"memory: loading {options.MemoryKeys:N0} keys into {server.Name} with redis-cli --pipe..."));
            var watch = Stopwatch.StartNew();
            Load(redisCli, server.Port, options.MemoryKeys);
            watch.Stop();
            server.EnsureRunning();
            long? usedAfter = ServerInfo.ReadInt64(connection, "memory", ServerInfo.UsedMemory);
            var sample = new MemorySample(server.Name, usedBefore, usedAfter, residentBefore, server.ResidentBytes(), watch.Elapsed);
            progress.WriteLine($"memory: {server.Name} used_memory {Format(sample.UsedMemoryAfter)}, RSS {Format(sample.ResidentAfter)}, loaded in {watch.Elapsed.TotalSeconds:0.0} s");
            return sample;
        }

        var ours = Measure(() => ServerUnderTest.StartOurs(options.ServerArgs));
        var redis = Measure(() => ServerUnderTest.StartRedis(redisServer));
        var garnet = garnetServer is null ? null : Measure(() => ServerUnderTest.StartGarnet(garnetServer));
        return new MemoryResult(options.MemoryKeys, BenchmarkOptions.DataSize, ours, redis, garnet);
    }

    private static string Format(long? bytes) => bytes is { } b ? string.Create(CultureInfo.InvariantCulture, $"{b / 1048576.0:0.0} MiB") : "n/a";

    /// <summary>Streams the RESP commands into redis-cli --pipe and checks every reply was +OK.</summary>
    public static void Load(string redisCli, int port, long keys)
    {
        var result = ExternalTools.Run(redisCli, ["-h", "127.0.0.1", "-p", port.ToString(CultureInfo.InvariantCulture), "--pipe"],
            TimeSpan.FromMinutes(10), input => WriteSetCommands(input, keys));
        string output = result.StandardOutput + result.StandardError;
        var summary = PipeSummary().Match(output);
        if (result.ExitCode != 0 || !summary.Success
            || summary.Groups["errors"].Value != "0"
            || long.Parse(summary.Groups["replies"].Value, CultureInfo.InvariantCulture) != keys)
            throw new HarnessException($"redis-cli --pipe did not store {keys} keys on port {port} (exit code {result.ExitCode}):\n{output}");
    }

    /// <summary>SET key:0000000 &lt;256 x&gt; ... as RESP multibulk, written in 64 KiB blocks.</summary>
    public static void WriteSetCommands(Stream output, long keys)
    {
        int digits = Math.Max(7, keys.ToString(CultureInfo.InvariantCulture).Length);
        string value = new('x', BenchmarkOptions.DataSize);
        // The caller owns (and closes) the stream; only the block buffer is ours.
        var block = new MemoryStream(64 * 1024 + 1024);
        var command = new StringBuilder(512);
        for (long i = 0; i < keys; i++)
        {
            string key = "key:" + i.ToString(CultureInfo.InvariantCulture).PadLeft(digits, '0');
            command.Clear()
                .Append("*3\r\n$3\r\nSET\r\n")
                .Append('$').Append(key.Length).Append("\r\n").Append(key).Append("\r\n")
                .Append('$').Append(value.Length).Append("\r\n").Append(value).Append("\r\n");
            block.Write(Encoding.ASCII.GetBytes(command.ToString()));
            if (block.Length >= 64 * 1024)
            {
                output.Write(block.GetBuffer(), 0, (int)block.Length);
                block.SetLength(0);
            }
        }
        output.Write(block.GetBuffer(), 0, (int)block.Length);
        output.Flush();
    }

    [GeneratedRegex(@"errors:\s*(?<errors>\d+),\s*replies:\s*(?<replies>\d+)")]
    private static partial Regex PipeSummary();
}
