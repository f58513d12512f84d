using System.Collections.Concurrent;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// A thread of its own that runs what the test hands it, so per-thread accounting can be observed
/// from a known thread that stays alive between steps (thread pool threads come and go).
/// </summary>
public sealed class DedicatedThread : IDisposable
{
    private readonly BlockingCollection<Action> _work = new();
    private readonly Thread _thread;

    public DedicatedThread(string name)
    {
        _thread = new Thread(Loop) { IsBackground = true, Name = name };
        _thread.Start();
    }

    public Thread Thread => _thread;

    public T Run<T>(Func<T> action)
    {
        T result = default!;
        Exception? failure = null;
        using var done = new ManualResetEventSlim();
        _work.Add(() =>
        {
            try { result = action(); }
            catch (Exception e) { failure = e; }
            finally { done.Set(); }
        });
        if (!done.Wait(TimeSpan.FromSeconds(60)))
            throw new TimeoutException($"{_thread.Name} did not finish its work");
        if (failure is not null)
            throw new InvalidOperationException($"failed on {_thread.Name}", failure);
        return result;
    }

    public void Run(Action action) => Run(() => { action(); return 0; });

    private void Loop()
    {
        foreach (var action in _work.GetConsumingEnumerable())
            action();
    }

    /// <summary>Lets the thread finish and waits until it has exited.</summary>
    public void Dispose()
    {
        _work.CompleteAdding();
        _thread.Join();
        _work.Dispose();
    }
}
