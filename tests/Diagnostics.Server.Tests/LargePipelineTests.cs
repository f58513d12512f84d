using System.Text;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// A pipeline far bigger than one read (what redis-cli --pipe and bulk loaders send) is parsed
/// into one growing request batch; every command must run and be answered, in order.
/// </summary>
public sealed class LargePipelineTests(SharedServer shared) : IClassFixture<SharedServer>
{
    [Fact]
    public void RedisCliPipeOfThousandsOfSetsStoresEveryKey()
    {
        const int keys = 5000;
        string value = new('v', 256);
        var stream = new StringBuilder();
        for (int i = 0; i < keys; i++)
        {
            string key = $"pipe:{i:D7}";
            stream.Append($"*3\r\n$3\r\nSET\r\n${key.Length}\r\n{key}\r\n${value.Length}\r\n{value}\r\n");
        }

        var result = ExternalTool.Run("redis-cli", "redis-tools", ["-p", shared.Server.Port.ToString(), "--pipe"], Encoding.ASCII.GetBytes(stream.ToString()));

        Assert.True(result.ExitCode == 0, $"redis-cli --pipe failed ({result.ExitCode}): {result.StandardOutput}{result.StandardError}");
        Assert.Contains($"errors: 0, replies: {keys}", result.StandardOutput);
        using var client = shared.Connect();
        RespAssert.Bulk(value, client.Call("GET", "pipe:0000000"));
        RespAssert.Bulk(value, client.Call("GET", $"pipe:{keys - 1:D7}"));
    }

    [Fact]
    public void OnePipelinedWriteOfManyCommandsGetsEveryReplyInOrder()
    {
        const int commands = 2000;
        string value = new('w', 512);
        var request = new StringBuilder();
        for (int i = 0; i < commands; i++)
            request.Append($"*3\r\n$3\r\nSET\r\n$13\r\nordered:{i:D5}\r\n${value.Length}\r\n{value}\r\n");
        for (int i = 0; i < commands; i++)
            request.Append($"*2\r\n$3\r\nGET\r\n$13\r\nordered:{i:D5}\r\n");

        using var client = shared.Connect();
        client.SendRaw(request.ToString());

        for (int i = 0; i < commands; i++)
            RespAssert.Ok(client.Read());
        for (int i = 0; i < commands; i++)
            RespAssert.Bulk(value, client.Read());
    }
}
