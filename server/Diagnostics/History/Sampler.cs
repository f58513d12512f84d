using System.Diagnostics;
using Diagnostics.Contracts;
using Diagnostics.Server.Diagnostics.Threads;
using Diagnostics.Server.Diagnostics.Views;

namespace Diagnostics.Server.Diagnostics.History;

/// <summary>
/// Once a second, on its own thread, asks every registered source for its figures and appends
/// them, with every thread's figures, to the history. Subsystems register their sources
/// (<see cref="AddSource"/>) instead of the sampler knowing them. Switched off with
/// "diagnostics-sampler no" (the history then simply stops growing): the benchmark measures
/// what it costs.
/// </summary>
public sealed class Sampler : IDisposable
{
    public const int IntervalMillis = 1000;
    /// <summary>An hour of samples.</summary>
    public const int HistoryCapacity = 3600;

    private readonly List<Action<SampleWriter>> _sources = [];
    private readonly SampleWriter _writer = new();
    private readonly ManualResetEventSlim _stopping = new();
    private readonly Dictionary<int, (double Net, double Disk)> _threadTotals = [];
    private Thread? _thread;
    private long _lastTimestamp;
    private long _lastStampMs;

    public MetricHistoryStore History { get; } = new(HistoryCapacity, IntervalMillis);
    public ThreadCpuTracker ThreadCpu { get; } = new();
    public bool Enabled { get; set; } = true;
    /// <summary>How long the last sample took to take, in microseconds (its own cost, shown in INFO).</summary>
    public long LastSampleMicros { get; private set; }
    /// <summary>Raised on the sampler's thread after each sample is stored (the studio pushes it on).</summary>
    public event Action<long>? Sampled;

    /// <summary>Adds a source of figures; sources run in the order they were added.</summary>
    public void AddSource(Action<SampleWriter> source)
    {
        lock (_sources)
            _sources.Add(source);
    }

    public void Start()
    {
        // A first sample now, before clients connect (its rates are 0): the next one's rates then
        // count everything since start, over the time between the two stamps. Without it the
        // first sample only recorded the counters, and what happened before it (refusals in the
        // first second, say) never showed in the history.
        SampleOnce();
        _thread = new Thread(Run) { IsBackground = true, Name = "sampler" };
        _thread.Start();
    }

    private void Run()
    {
        long lastBoundary = 0;
        while (true)
        {
            // On the second boundary, so samples of different servers (and the kernel monitor's) line
            // up. A sample is stamped with its boundary, not the time it took to finish (a loaded
            // machine made two samples 45 ms apart); a wait that ended a little early must not
            // stamp the same boundary twice.
            long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
            int wait = IntervalMillis - (int)(now % IntervalMillis);
            long boundary = now + wait;
            // Nor one too close to the start's off-boundary sample: at least half an interval apart.
            if (boundary == lastBoundary || boundary - _lastStampMs < IntervalMillis / 2)
            {
                boundary += IntervalMillis;
                wait = (int)(boundary - now);
            }
            if (_stopping.Wait(wait))
                return;
            if (!Enabled)
            {
                _lastTimestamp = 0;
                continue;
            }
            lastBoundary = boundary;
            var row = ThreadCounters.Current;
            row.InFlight.Begin("diagnostics sample");
            try
            {
                SampleOnce(boundary);
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or InvalidOperationException)
            {
                // One failed reading loses one sample, never the sampler.
            }
            finally
            {
                row.InFlight.End();
            }
        }
    }

    /// <summary>Takes one sample now (the sampler thread, or a test), stamped <paramref name="atUnixMs"/> (default: when it ends).</summary>
    public void SampleOnce(long? atUnixMs = null)
    {
        long started = Stopwatch.GetTimestamp();
        double elapsed = _lastTimestamp == 0 ? 0 : Stopwatch.GetElapsedTime(_lastTimestamp, started).TotalSeconds;
        _lastTimestamp = started;
        _writer.Begin(elapsed);
        _writer.Gauge(MetricNames.SampleIntervalSeconds, elapsed);
        Action<SampleWriter>[] sources;
        lock (_sources)
            sources = [.. _sources];
        foreach (var source in sources)
            source(_writer);

        var threads = SampleThreads(elapsed);
        _lastStampMs = atUnixMs ?? DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        History.Append(_lastStampMs, _writer.Figures, threads);
        LastSampleMicros = (long)Stopwatch.GetElapsedTime(started).TotalMicroseconds;
        Sampled?.Invoke(DateTimeOffset.UtcNow.ToUnixTimeMilliseconds());
    }

    /// <summary>The kernel's thread list (names, CPU seconds) as the last sample read it: a second old at most, for readers that do not need it fresher (the doctor).</summary>
    public List<(int Tid, string Name, double User, double System)>? LastKernelThreads => Volatile.Read(ref _lastKernelThreads);
    private List<(int Tid, string Name, double User, double System)>? _lastKernelThreads;

    private Dictionary<int, MetricHistoryStore.ThreadSample> SampleThreads(double elapsed)
    {
        var kernelThreads = ThreadView.KernelThreads();
        Volatile.Write(ref _lastKernelThreads, kernelThreads);
        var cpuSeconds = new Dictionary<int, double>(kernelThreads.Count);
        foreach (var (tid, _, user, system) in kernelThreads)
            cpuSeconds[tid] = user + system;
        ThreadCpu.Sample(cpuSeconds);

        var samples = new Dictionary<int, MetricHistoryStore.ThreadSample>();
        var seen = new HashSet<int>();
        foreach (var thread in ThreadView.Build(ThreadCpu, kernelThreads, includeKernelIo: false))
        {
            if (!thread.Alive)
                continue;
            double net = thread.NetInputBytes + thread.NetOutputBytes;
            double disk = thread.DiskReadBytes + thread.DiskWriteBytes;
            float netRate = 0, diskRate = 0;
            if (elapsed > 0 && _threadTotals.TryGetValue(thread.OsThreadId, out var before))
            {
                netRate = (float)(Math.Max(0, net - before.Net) / elapsed);
                diskRate = (float)(Math.Max(0, disk - before.Disk) / elapsed);
            }
            _threadTotals[thread.OsThreadId] = (net, disk);
            seen.Add(thread.OsThreadId);
            samples[thread.OsThreadId] = new(thread.Name, thread.Role, (float)thread.CpuPercent, thread.TrackedBytes, netRate, diskRate);
        }
        foreach (int tid in _threadTotals.Keys)
            if (!seen.Contains(tid))
                _threadTotals.Remove(tid);
        return samples;
    }

    public void Dispose()
    {
        _stopping.Set();
        _thread?.Join(TimeSpan.FromSeconds(5));
        _stopping.Dispose();
    }
}
