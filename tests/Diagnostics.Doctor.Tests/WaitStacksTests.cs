using Diagnostics.Doctor;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The stacks report of a package grouped by where the pool's busy threads stand: idle pool
/// threads and other threads left out, odd lines (the file comes from outside) skipped.
/// </summary>
public sealed class WaitStacksTests
{
    private const string Report = """
        # Managed stacks of all threads of process 42, captured 2026-11-26T12:00:00.000Z
        # 4 threads with a managed sample.

        Thread 101 (0x65) ".NET TP Worker" [S (sleeping)]:
          System.Private.CoreLib!System.Threading.Lock.TryEnterSlow(int32,int32)
          Diagnostics.Server!Diagnostics.Server.Engine.Shard.EnterInline()
          Diagnostics.Server!Diagnostics.Server.Network.ShardRouter+<ExecuteCoordinatedAsync>d__24.MoveNext()
          System.Private.CoreLib!System.Threading.ThreadPoolWorkQueue.Dispatch()

        Thread 102 (0x66) ".NET TP Worker" [S (sleeping)]:
          System.Private.CoreLib!System.Threading.Lock.TryEnterSlow(int32,int32)
          Diagnostics.Server!Diagnostics.Server.Engine.Shard.EnterInline()
          Diagnostics.Server!Diagnostics.Server.Network.ShardRouter+<ExecuteCoordinatedAsync>d__24.MoveNext()

        Thread 103 (0x67) ".NET TP Worker" [S (sleeping)]:
          System.Private.CoreLib!System.Threading.LowLevelLifoSemaphore.WaitForSignal(int32)
          System.Private.CoreLib!System.Threading.PortableThreadPool+WorkerThread.WorkerDoWork(class System.Threading.PortableThreadPool,bool&)

        Thread 104 (0x68) "shard cron" [S (sleeping)]:
          System.Private.CoreLib!System.Threading.Lock.TryEnterSlow(int32,int32)
        """;

    [Fact]
    public void GroupsBusyPoolThreadsByWhereTheyBlock()
    {
        var groups = WaitStacks.Summarize(new StringReader(Report));
        var group = Assert.Single(groups);
        Assert.Equal(2, group.Threads);
        Assert.Equal("System.Private.CoreLib!System.Threading.Lock.TryEnterSlow(int32,int32)", group.BlockedIn);
        Assert.Equal("Diagnostics.Server.Engine.Shard.EnterInline <- Diagnostics.Server.Network.ShardRouter+<ExecuteCoordinatedAsync>d__24.MoveNext", group.ServerFrames);
    }

    [Fact]
    public void OddInputIsSkippedAndGroupsAreBounded()
    {
        var text = new System.Text.StringBuilder("Thread x \"broken\n  frame without a thread\n\0\0\n");
        for (int i = 0; i < 100; i++)
            text.Append($"Thread {i} (0x1) \".NET TP Worker\" [R]:\n  Frame{i}!M()\n\n");
        text.Append("Thread 7 (0x7) \".NET TP Worker\" [R]:\n  ").Append('x', 100_000).Append('\n');
        var groups = WaitStacks.Summarize(new StringReader(text.ToString()));
        Assert.Equal(32, groups.Count);
        Assert.All(groups, g => Assert.True(g.BlockedIn.Length <= 512));
    }
}
