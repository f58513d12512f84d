using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// redis-cli 7 against this server as people use it. In interactive mode redis-cli fetches
/// COMMAND DOCS to build its help and hints and aborts on a reply whose shape it does not expect;
/// these tests run it in a pseudo-terminal (script(1) from bsdutils) and check it serves a session.
/// </summary>
public sealed class RedisCliInteractiveTests(SharedServer shared) : IClassFixture<SharedServer>
{
    [Fact]
    public void InteractiveSessionBuildsHelpFromCommandDocsAndRunsCommands()
    {
        string redisCli = ExternalTool.Require("redis-cli", "redis-tools");
        int port = shared.Server.Port;
        string prompt = $"127.0.0.1:{port}>";
        using var terminal = new TerminalSession($"{redisCli} -p {port}");

        // The first prompt appears only after redis-cli has digested COMMAND DOCS.
        terminal.WaitFor(prompt);
        terminal.TypeLine("ping");
        terminal.WaitFor("PONG");
        terminal.TypeLine("set cli:interactive:key hello");
        terminal.WaitFor("OK");
        terminal.TypeLine("get cli:interactive:key");
        terminal.WaitFor("\"hello\"");

        // HELP output is built from our COMMAND DOCS: summary, since, group and the argument syntax.
        terminal.TypeLine("help set");
        terminal.WaitFor("key value [NX|XX] [GET]");
        terminal.WaitFor("group:");
        terminal.TypeLine("help config set");
        terminal.WaitFor("CONFIG SET");
        terminal.WaitFor("parameter value [parameter value ...]");
        terminal.TypeLine("help @server");
        terminal.WaitFor("INFO");

        terminal.TypeLine("quit");
        Assert.True(terminal.WaitForExit(20_000), $"redis-cli did not exit after quit:\n{terminal.Output}");
        Assert.Equal(0, terminal.ExitCode);
        Assert.DoesNotContain("Assertion", terminal.Output);
        Assert.DoesNotContain("Unknown type", terminal.Output);
    }

    [Fact]
    public void CommandDocsParsesInNoRawMode()
    {
        var result = ExternalTool.RedisCli(shared.Server.Port, "--no-raw", "COMMAND", "DOCS", "get");
        Assert.Equal(0, result.ExitCode);
        Assert.Contains("1) \"get\"", result.StandardOutput);
        Assert.Contains("\"summary\"", result.StandardOutput);
        Assert.Contains("\"arguments\"", result.StandardOutput);
        Assert.Contains("\"key_spec_index\"", result.StandardOutput);
        Assert.DoesNotContain("ERR", result.StandardOutput);
    }

    [Fact]
    public void CommandAndCommandDocsParseInResp3()
    {
        var docs = ExternalTool.RedisCli(shared.Server.Port, "-3", "--no-raw", "COMMAND", "DOCS");
        Assert.Equal(0, docs.ExitCode);
        Assert.Contains("\"config|set\"", docs.StandardOutput);
        var info = ExternalTool.RedisCli(shared.Server.Port, "-3", "--no-raw", "COMMAND");
        Assert.Equal(0, info.ExitCode);
        Assert.Contains("~ @read", info.StandardOutput);
        Assert.Contains("config|get", info.StandardOutput);
    }

    [Fact]
    public void InfoIsReadableThroughRedisCli()
    {
        var result = ExternalTool.RedisCli(shared.Server.Port, "INFO", "server");
        Assert.Equal(0, result.ExitCode);
        Assert.Contains("# Server", result.StandardOutput);
        Assert.Contains("redis_version:7.2.0", result.StandardOutput);
    }
}
