namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// Sends commands in pipelined chunks and reads all their replies: fast bulk loading for tests.
/// Chunks keep the unread replies small, so neither side can block on a full socket buffer.
/// </summary>
public static class Pipeline
{
    private const int ChunkSize = 500;

    public static List<RespValue> Run(RespClient client, IEnumerable<string[]> commands)
    {
        var replies = new List<RespValue>();
        using var buffer = new MemoryStream();
        int pending = 0;
        foreach (var command in commands)
        {
            buffer.Write(RespClient.Encode(command));
            if (++pending == ChunkSize)
                Flush(client, buffer, ref pending, replies);
        }
        Flush(client, buffer, ref pending, replies);
        return replies;
    }

    /// <summary>Runs the commands and asserts that none of them failed.</summary>
    public static void RunAll(RespClient client, IEnumerable<string[]> commands)
    {
        foreach (var reply in Run(client, commands))
            Assert.False(reply.IsError, $"pipelined command failed: {reply}");
    }

    private static void Flush(RespClient client, MemoryStream buffer, ref int pending, List<RespValue> replies)
    {
        if (pending == 0)
            return;
        client.SendRaw(buffer.ToArray());
        buffer.SetLength(0);
        for (; pending > 0; pending--)
            replies.Add(client.Read());
    }
}
