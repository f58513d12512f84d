namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// The conformance tests' loop: the same commands sent to this server and to the real
/// redis-server, in RESP2 and then RESP3, every reply compared as text, error texts included.
/// </summary>
public static class SideBySideReplies
{
    /// <param name="reset">Run on each connection before the commands (FLUSHALL, SCRIPT FLUSH...).</param>
    /// <param name="render">A reply as compared, given its command's index (to sort a reply whose order Redis leaves open); ToString when null.</param>
    public static void AssertSame(IReadOnlyList<string[]> commands, Action<RespClient> reset, Func<int, RespValue, string>? render = null)
        => AssertSame(commands.Select(c => c.Select(System.Text.Encoding.UTF8.GetBytes).ToArray()).ToArray(), reset, render);

    /// <summary>As above, for commands with binary arguments (DUMP payloads, raw values).</summary>
    public static void AssertSame(IReadOnlyList<byte[][]> commands, Action<RespClient> reset, Func<int, RespValue, string>? render = null)
    {
        render ??= (_, reply) => reply.ToString();
        using var ours = ServerProcess.Start();
        using var redis = RealRedisServer.Start();
        foreach (int protocol in (int[])[2, 3])
        {
            using var a = ours.Connect();
            using var b = redis.Connect();
            foreach (var c in new[] { a, b })
            {
                if (protocol == 3)
                    Assert.Equal('%', c.Call("HELLO", "3").Kind);
                reset(c);
            }
            for (int i = 0; i < commands.Count; i++)
            {
                string mine = render(i, a.Call(commands[i]));
                string theirs = render(i, b.Call(commands[i]));
                Assert.True(mine == theirs, $"RESP{protocol} {Describe(commands[i])}\n  redis: {theirs}\n  ours:  {mine}");
            }
        }
    }

    /// <summary>A command as text, its arguments that are not printable shown as their length.</summary>
    public static string Describe(byte[][] command)
        => string.Join(' ', command.Select(a => a.All(b => b is >= 0x20 and < 0x7f) ? System.Text.Encoding.ASCII.GetString(a) : $"<{a.Length} bytes>"));
}
