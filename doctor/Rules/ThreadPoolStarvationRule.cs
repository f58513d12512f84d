using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>Work waits in the thread pool's queue second after second: the pool is starved.</summary>
public sealed class ThreadPoolStarvationRule : IDoctorRule
{
    private const int SustainedSeconds = 5;

    public string Id => "threadpool-starvation";
    public string Area => "runtime";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        var queue = input.Recent(MetricNames.ThreadPoolQueueLength, 60);
        int run = 0, longest = 0;
        double worst = 0;
        foreach (double length in queue)
        {
            run = length > 0 ? run + 1 : 0;
            longest = Math.Max(longest, run);
            worst = Math.Max(worst, length);
        }
        if (longest < SustainedSeconds)
            yield break;
        var threads = input.Recent(MetricNames.ThreadPoolThreads, 1);
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = FindingSeverity.Warning,
            Title = "The thread pool is starved",
            Seen = $"Work items waited in the thread pool queue for {longest} seconds in a row (up to {worst:0} queued) with {(threads.Length > 0 ? threads[0] : 0):0} pool threads.",
            Advice = "Something blocks pool threads (a long command, a wait on a busy shard, synchronous I/O): capture the managed stacks (stacks.txt, /api/stacks) to see where they wait.",
            Evidence = new() { ["seconds_queued"] = longest.ToString(System.Globalization.CultureInfo.InvariantCulture), ["max_queue_length"] = worst.ToString("0", System.Globalization.CultureInfo.InvariantCulture) },
            Chart = MetricNames.ThreadPoolQueueLength,
        };
    }
}
