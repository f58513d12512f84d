using System.Globalization;
using System.Text.RegularExpressions;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The real Redis tools (Debian's redis-tools: redis-cli and redis-benchmark) against the server:
/// what an operator types must work and print what it prints against Redis.
/// </summary>
public sealed class RedisCliTests(SharedServer shared) : IClassFixture<SharedServer>
{
    private int Port => shared.Server.Port;

    [Fact]
    public void SetAndGetFromTheCommandLine()
    {
        var set = ExternalTool.RedisCli(Port, "SET", "cli:key", "hello world");
        Assert.Equal(0, set.ExitCode);
        Assert.Equal("OK\n", set.StandardOutput);

        var get = ExternalTool.RedisCli(Port, "GET", "cli:key");
        Assert.Equal("hello world\n", get.StandardOutput);

        var missing = ExternalTool.RedisCli(Port, "--no-raw", "GET", "cli:missing");
        Assert.Equal("(nil)\n", missing.StandardOutput);

        // redis-cli prints an error reply followed by an empty line, against Redis too.
        var error = ExternalTool.RedisCli(Port, "foo", "a", "b");
        Assert.Equal("ERR unknown command 'foo', with args beginning with: 'a' 'b' \n\n", error.StandardOutput);
    }

    [Fact]
    public void Resp3HelloIsPrintedAsAMap()
    {
        var hello = ExternalTool.RedisCli(Port, "--no-raw", "-3", "HELLO");
        Assert.Equal(0, hello.ExitCode);
        string[] lines = hello.StandardOutput.TrimEnd('\n').Split('\n');
        Assert.Equal(7, lines.Length);
        Assert.Equal("1# \"server\" => \"redis\"", lines[0]);
        Assert.Matches("^2# \"version\" => \"[0-9]+\\.[0-9]+\\.[0-9]+\"$", lines[1]);
        Assert.Equal("3# \"proto\" => (integer) 3", lines[2]);
        Assert.Matches("^4# \"id\" => \\(integer\\) [0-9]+$", lines[3]);
        Assert.Equal("5# \"mode\" => \"standalone\"", lines[4]);
        Assert.Equal("6# \"role\" => \"master\"", lines[5]);
        Assert.Equal("7# \"modules\" => (empty array)", lines[6]);

        var missing = ExternalTool.RedisCli(Port, "--no-raw", "-3", "GET", "cli:resp3:missing");
        Assert.Equal("(nil)\n", missing.StandardOutput);

        var resp2 = ExternalTool.RedisCli(Port, "--no-raw", "-2", "HELLO");
        Assert.StartsWith(" 1) \"server\"\n 2) \"redis\"\n 3) \"version\"\n", resp2.StandardOutput);
    }

    [Fact]
    public void PipeModeMassInsertsOneHundredThousandKeys()
    {
        const int count = 100_000;
        var input = new MemoryStream();
        for (int i = 0; i < count; i++)
            input.Write(RespClient.Encode("SET", $"cli:pipe:{i}", $"value:{i}"));

        var result = ExternalTool.Run("redis-cli", "redis-tools", ["-p", Port.ToString(CultureInfo.InvariantCulture), "--pipe"], input.ToArray());
        Assert.True(result.ExitCode == 0, $"redis-cli --pipe exited {result.ExitCode}: {result.StandardOutput}{result.StandardError}");
        Assert.Contains("errors: 0, replies: 100000", result.StandardOutput);

        using var c = shared.Connect();
        foreach (int i in new[] { 0, 1, 1023, 1024, 1025, 4096, 33_333, 65_535, 65_536, 99_998, 99_999 })
            RespAssert.Bulk($"value:{i}", c.Call("GET", $"cli:pipe:{i}"));
        var random = new Random(7);
        for (int n = 0; n < 200; n++)
        {
            int i = random.Next(count);
            RespAssert.Bulk($"value:{i}", c.Call("GET", $"cli:pipe:{i}"));
        }
    }

    [Fact]
    public void BenchmarkRunsSetAndGet()
    {
        var run = RunBenchmark("-t", "set,get", "-n", "20000", "-c", "20", "-q");
        AssertPositiveRates(run, "SET", "GET");
    }

    [Fact]
    public void BenchmarkRunsPipelined()
    {
        var run = RunBenchmark("-t", "set,get", "-n", "20000", "-c", "20", "-q", "-P", "16");
        AssertPositiveRates(run, "SET", "GET");
    }

    private ExternalTool.Result RunBenchmark(params string[] arguments)
        => ExternalTool.Run("redis-benchmark", "redis-tools", ["-p", Port.ToString(CultureInfo.InvariantCulture), .. arguments], timeoutMs: 300_000);

    private static void AssertPositiveRates(ExternalTool.Result run, params string[] tests)
    {
        Assert.True(run.ExitCode == 0, $"redis-benchmark exited {run.ExitCode}: {run.StandardOutput}{run.StandardError}");
        foreach (string test in tests)
        {
            // -q prints progress lines separated by CR, then "SET: 41152.26 requests per second, p50=...".
            Match rate = Regex.Match(run.StandardOutput, $@"(?:^|[\r\n]){test}: ([0-9.]+) requests per second");
            Assert.True(rate.Success, $"no {test} rate in:\n{run.StandardOutput}");
            Assert.True(double.Parse(rate.Groups[1].Value, CultureInfo.InvariantCulture) > 0, $"{test} rate was {rate.Groups[1].Value}");
        }
        Assert.DoesNotContain("ERR", run.StandardOutput + run.StandardError);
    }
}
