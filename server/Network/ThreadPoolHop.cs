using System.Runtime.CompilerServices;

namespace Diagnostics.Server.Network;

/// <summary>
/// Awaited to move the rest of a connection's work to a thread pool thread when it runs on a
/// socket engine thread. With inline socket completions (Program.cs) commands run on the engine's
/// own threads, which also serve every other socket in the process, the HTTP API's included: a
/// long command, or a wait for a shard a long command holds, would leave those sockets unserved,
/// so the operator could not even ask what the server is doing. Pool threads are the runtime's to
/// multiply.
/// </summary>
/// <remarks>
/// An awaiter of its own, not an async method around Task.Yield: the caller of such a method
/// checks whether it finished only after the yield was queued, and when a pool thread had already
/// run the rest of it, the caller went on right there, on the socket thread. Here the check is
/// made where the caller awaits.
/// </remarks>
internal readonly struct ThreadPoolHop : ICriticalNotifyCompletion
{
    /// <summary>Continues on a pool thread: at once when already on one, else after a hop.</summary>
    public static ThreadPoolHop FromSocketThread() => default;

    public ThreadPoolHop GetAwaiter() => this;

    public bool IsCompleted => Thread.CurrentThread.IsThreadPoolThread;

    public void GetResult() { }

    public void OnCompleted(Action continuation)
        => ThreadPool.QueueUserWorkItem(static run => run(), continuation, preferLocal: false);

    public void UnsafeOnCompleted(Action continuation)
        => ThreadPool.UnsafeQueueUserWorkItem(static run => run(), continuation, preferLocal: false);
}
