using System.Collections.Concurrent;
using System.IO.Pipelines;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Api.Lane;

/// <summary>
/// Threads of the server's own that serve the HTTP API, the studio and the debug package, so the
/// operator can still ask what is wrong when the thread pool is starved (every pool thread blocked,
/// the runtime adding one or two a second): requests, their handlers and whatever they await
/// continue here, never behind the pool's queue. A <see cref="PipeScheduler"/> for the connections'
/// pipes and a <see cref="SynchronizationContext"/> installed on each thread, so an <c>await</c> in
/// a handler comes back here too. Work items are (callback, state) pairs in a queue: scheduling
/// allocates nothing.
/// </summary>
/// <remarks>
/// Written by hand: the runtime's only schedulers are the thread pool and inline, and a dedicated
/// <see cref="TaskScheduler"/> would not reach Kestrel's pipe continuations.
/// </remarks>
public sealed class DiagnosticsLane : PipeScheduler, IDisposable
{
    private readonly ConcurrentQueue<WorkItem> _queue = new();
    private readonly SemaphoreSlim _ready = new(0);
    private readonly Thread[] _threads;
    private readonly LaneContext _context;
    private volatile bool _stopping;
    private long _executed;
    private long _busyTicks;

    public DiagnosticsLane(int threadCount)
    {
        _context = new LaneContext(this);
        _threads = new Thread[threadCount];
        for (int i = 0; i < threadCount; i++)
        {
            string name = "diagnostics http " + i;
            _threads[i] = new Thread(() => Run(name)) { IsBackground = true, Name = name };
            _threads[i].Start();
        }
    }

    public int ThreadCount => _threads.Length;

    /// <summary>Work items run since start.</summary>
    public long Executed => Interlocked.Read(ref _executed);

    /// <summary>Items waiting for a lane thread now.</summary>
    public int Queued => _queue.Count;

    /// <summary>Time the lane's threads spent running work, in <see cref="System.Diagnostics.Stopwatch"/> ticks.</summary>
    public long BusyTicks => Interlocked.Read(ref _busyTicks);

    /// <summary>True on one of the lane's threads.</summary>
    public bool IsLaneThread => SynchronizationContext.Current == _context;

    public override void Schedule(Action<object?> action, object? state) => Enqueue(new WorkItem(action, null, state));

    private void Enqueue(WorkItem item)
    {
        _queue.Enqueue(item);
        _ready.Release();
    }

    private void Run(string name)
    {
        TrackedAllocator.NameCurrentThread(name);
        SynchronizationContext.SetSynchronizationContext(_context);
        while (true)
        {
            _ready.Wait();
            if (_stopping)
                return;
            if (!_queue.TryDequeue(out var item))
                continue;
            long start = System.Diagnostics.Stopwatch.GetTimestamp();
            try
            {
                if (item.Action is not null)
                    item.Action(item.State);
                else
                    item.Callback!(item.State);
            }
            catch (Exception ex)
            {
                // As the pool would, but without taking the process down for one request's fault:
                // pipe and await continuations catch their own; this is a bug to see, not to die of.
                Console.Error.WriteLine($"Unhandled exception on {name}: {ex}");
            }
            // The handler may have replaced or cleared the context; the lane's work needs it back.
            if (SynchronizationContext.Current != _context)
                SynchronizationContext.SetSynchronizationContext(_context);
            Interlocked.Add(ref _busyTicks, System.Diagnostics.Stopwatch.GetTimestamp() - start);
            Interlocked.Increment(ref _executed);
        }
    }

    public void Dispose()
    {
        _stopping = true;
        _ready.Release(_threads.Length);
        foreach (var thread in _threads)
            thread.Join(TimeSpan.FromSeconds(5));
    }

    private readonly record struct WorkItem(Action<object?>? Action, SendOrPostCallback? Callback, object? State);

    /// <summary>Posts continuations back to the lane; Send runs inline as the default context does.</summary>
    private sealed class LaneContext(DiagnosticsLane lane) : SynchronizationContext
    {
        public override void Post(SendOrPostCallback d, object? state) => lane.Enqueue(new WorkItem(null, d, state));

        public override SynchronizationContext CreateCopy() => this;
    }
}
