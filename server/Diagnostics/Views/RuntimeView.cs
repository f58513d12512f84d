using System.Runtime;
using Diagnostics.Contracts;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>The garbage collector's and the thread pool's state, as the runtime reports them about itself.</summary>
public static class RuntimeView
{
    public static RuntimeReport Build()
    {
        var info = GC.GetGCMemoryInfo();
        var pauses = new List<double>();
        // The most recent collection of each kind: an ephemeral one, a blocking full one, a background one.
        foreach (var kind in new[] { GCKind.Ephemeral, GCKind.FullBlocking, GCKind.Background })
        {
            var last = GC.GetGCMemoryInfo(kind);
            if (last.Index == 0)
                continue;
            foreach (var pause in last.PauseDurations)
                if (pause > TimeSpan.Zero)
                    pauses.Add(pause.TotalMilliseconds);
        }
        ThreadPool.GetMinThreads(out int minWorkers, out _);
        ThreadPool.GetMaxThreads(out int maxWorkers, out _);
        ThreadPool.GetAvailableThreads(out int availableWorkers, out _);
        return new RuntimeReport
        {
            Framework = System.Runtime.InteropServices.RuntimeInformation.FrameworkDescription,
            ServerGc = GCSettings.IsServerGC,
            GcLatencyMode = GCSettings.LatencyMode.ToString(),
            HeapBytes = info.HeapSizeBytes,
            CommittedBytes = info.TotalCommittedBytes,
            FragmentedBytes = info.FragmentedBytes,
            TotalAllocatedBytes = GC.GetTotalAllocatedBytes(false),
            Collections = [GC.CollectionCount(0), GC.CollectionCount(1), GC.CollectionCount(2)],
            TotalPauseMillis = GC.GetTotalPauseDuration().TotalMilliseconds,
            PauseTimePercent = info.PauseTimePercentage,
            LastPausesMillis = pauses,
            ThreadPoolThreads = ThreadPool.ThreadCount,
            ThreadPoolPendingWorkItems = ThreadPool.PendingWorkItemCount,
            ThreadPoolCompletedWorkItems = ThreadPool.CompletedWorkItemCount,
            ThreadPoolMinWorkers = minWorkers,
            ThreadPoolMaxWorkers = maxWorkers,
            ThreadPoolAvailableWorkers = availableWorkers,
            LockContentions = System.Threading.Monitor.LockContentionCount,
            // /proc/self/task's entries, not Process.Threads (which parses every thread's stat file).
            ProcessThreads = Kernel.ProcFs.Available ? Kernel.ProcFs.ThreadIds().Count : System.Diagnostics.Process.GetCurrentProcess().Threads.Count,
        };
    }
}
