using System.Text;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// Pipelines: many commands in one write answered in order, and requests cut at arbitrary byte
/// boundaries (the server must wait for the rest of a command, never misparse or lose it).
/// </summary>
public sealed class PipeliningTests(SharedServer shared) : IClassFixture<SharedServer>
{
    [Fact]
    public async Task TenThousandCommandsInOneWriteAreAnsweredInOrder()
    {
        using var c = shared.Connect();
        const int count = 10_000;
        var request = new MemoryStream();
        var expected = new List<(char Kind, string Text)>(count);
        for (int i = 0; i < count; i++)
        {
            switch (i % 4)
            {
                case 0:
                    request.Write(RespClient.Encode("SET", $"pipe10k:{i}", $"value-{i}"));
                    expected.Add(('+', "OK"));
                    break;
                case 1:
                    request.Write(RespClient.Encode("GET", $"pipe10k:{i - 1}"));
                    expected.Add(('$', $"value-{i - 1}"));
                    break;
                case 2:
                    request.Write(RespClient.Encode("PING"));
                    expected.Add(('+', "PONG"));
                    break;
                default:
                    request.Write(RespClient.Encode("ECHO", $"echo-{i}"));
                    expected.Add(('$', $"echo-{i}"));
                    break;
            }
        }

        // Write on another thread: a server that answers while the request is still arriving
        // must not deadlock against a client that reads only after writing.
        var send = Task.Run(() => c.SendRaw(request.ToArray()));
        for (int i = 0; i < count; i++)
        {
            RespValue reply = c.Read();
            Assert.True(reply.Kind == expected[i].Kind && reply.Text == expected[i].Text,
                $"reply {i}: expected {expected[i].Kind}{expected[i].Text}, got {reply}");
        }
        await send;
        RespAssert.Simple("PONG", c.Call("PING"));
    }

    [Fact]
    public void APipelineSplitAtEveryByteIsParsedCorrectly()
    {
        using var c = shared.Connect();
        const int commands = 50;
        for (int split = 1; ; split++)
        {
            byte[] pipeline = SetGetPipeline($"pipesplit:{split % 7}", split, commands, out var expected);
            if (split >= pipeline.Length)
                break;
            c.SendRaw(pipeline[..split]);
            Thread.Sleep(1); // lets the server read the first part on its own
            c.SendRaw(pipeline[split..]);
            for (int i = 0; i < commands; i++)
            {
                RespValue reply = c.Read();
                Assert.True(reply.Text == expected[i], $"split at byte {split}, reply {i}: expected {expected[i]}, got {reply}");
            }
        }
    }

    [Fact]
    public void APipelineSentOneByteAtATimeIsParsedCorrectly()
    {
        using var c = shared.Connect();
        byte[] pipeline = SetGetPipeline("pipebytes", 1, 6, out var expected);
        byte[] inline = "SET pipebytes:inline \"a b\"\r\nGET pipebytes:inline\r\n"u8.ToArray();
        foreach (byte b in pipeline.Concat(inline))
            c.SendRaw([b]);
        foreach (string text in expected)
            Assert.Equal(text, c.Read().Text);
        RespAssert.Ok(c.Read());
        RespAssert.Bulk("a b", c.Read());
    }

    [Fact]
    public void AOneMegabyteValueSplitAcrossManyWritesIsStoredIntact()
    {
        using var c = shared.Connect();
        var value = new StringBuilder(1024 * 1024);
        for (int i = 0; i < 1024 * 1024; i++)
            value.Append((char)('a' + i * 7 % 26));
        string text = value.ToString();
        byte[] request = RespClient.Encode("SET", "pipebig", text);

        var random = new Random(12345);
        int offset = 0, writes = 0;
        while (offset < request.Length)
        {
            int size = Math.Min(request.Length - offset, random.Next(1, 40_000));
            c.SendRaw(request[offset..(offset + size)]);
            offset += size;
            if (++writes % 8 == 0)
                Thread.Sleep(1);
        }
        Assert.True(writes > 40, $"only {writes} writes");
        RespAssert.Ok(c.Read());
        RespValue reply = c.Call("GET", "pipebig");
        Assert.Equal('$', reply.Kind);
        Assert.Equal(text.Length, reply.Text!.Length);
        Assert.True(text == reply.Text, "the value read back differs from the value written");
    }

    /// <summary>SET then GET of each key; the values depend on <paramref name="round"/> so a stale value is caught.</summary>
    private static byte[] SetGetPipeline(string prefix, int round, int commands, out List<string> expected)
    {
        var request = new MemoryStream();
        expected = [];
        for (int i = 0; i < commands / 2; i++)
        {
            string key = $"{prefix}:{i}", value = $"v{round}-{i}";
            request.Write(RespClient.Encode("SET", key, value));
            expected.Add("OK");
            request.Write(RespClient.Encode("GET", key));
            expected.Add(value);
        }
        return request.ToArray();
    }

    [Fact]
    public void AMultibulkArrivingInSmallPiecesRunsOnceCompleteAndIsShownAsQueryBuffer()
    {
        using var c = shared.Connect();
        using var observer = shared.Connect();
        RespAssert.Ok(c.Call("CLIENT", "SETNAME", "slow-mset"));
        const int pairs = 20_000;
        var args = new List<string>(1 + pairs * 2) { "MSET" };
        for (int i = 0; i < pairs; i++)
        {
            args.Add($"slowmset:{i}");
            args.Add($"v{i}");
        }
        byte[] request = RespClient.Encode(args.ToArray());
        int half = request.Length / 2;

        // First half in 1000-byte writes: nothing may run yet, and the partial command is
        // reported as this client's query buffer.
        for (int offset = 0; offset < half; offset += 1000)
            c.SendRaw(request[offset..Math.Min(half, offset + 1000)]);
        Poll.Until(() => QueryBuffer(observer, "slow-mset") > half / 2, "the partial MSET shows as query buffer");
        RespAssert.Integer(0, observer.Call("EXISTS", "slowmset:0"));

        for (int offset = half; offset < request.Length; offset += 1000)
            c.SendRaw(request[offset..Math.Min(request.Length, offset + 1000)]);
        RespAssert.Ok(c.Read());
        RespAssert.Bulk("v0", observer.Call("GET", "slowmset:0"));
        RespAssert.Bulk($"v{pairs - 1}", observer.Call("GET", $"slowmset:{pairs - 1}"));
        Assert.Equal(0, QueryBuffer(observer, "slow-mset"));
    }

    private static long QueryBuffer(RespClient observer, string name)
    {
        string list = observer.Call("CLIENT", "LIST").Text!;
        foreach (string line in list.Split('\n'))
        {
            if (!line.Contains($" name={name} ", StringComparison.Ordinal))
                continue;
            foreach (string field in line.Split(' '))
                if (field.StartsWith("qbuf=", StringComparison.Ordinal))
                    return long.Parse(field[5..]);
        }
        throw new InvalidOperationException($"client {name} not in CLIENT LIST:\n{list}");
    }
}
