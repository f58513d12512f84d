using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// Work waits in the thread pool's queue second after second: the pool is starved. Says what the
/// pool's threads are blocked on (their in-flight slots: threads waiting for shards say so; from a
/// package, their stacks too) and which commands run longest meanwhile (a KEYS or DEBUG SLEEP
/// holding every shard).
/// </summary>
public sealed class ThreadPoolStarvationRule : IDoctorRule
{
    private const int SustainedSeconds = 5;
    private const int HoldersShown = 3;
    private const int StacksShown = 3;

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
        var evidence = new Dictionary<string, string>
        {
            ["seconds_queued"] = longest.ToString(CultureInfo.InvariantCulture),
            ["max_queue_length"] = worst.ToString("0", CultureInfo.InvariantCulture),
        };
        var seen = new List<string>
        {
            $"Work items waited in the thread pool queue for {longest} seconds in a row (up to {worst:0} queued) with {(threads.Length > 0 ? threads[0] : 0):0} pool threads.",
        };

        int waiting = 0;
        var waitingClients = new List<long>();
        foreach (var work in input.InFlight)
        {
            if (work.Activity != InFlightWork.WaitingForShards)
                continue;
            waiting++;
            if (work.ClientId != 0 && waitingClients.Count < 8)
                waitingClients.Add(work.ClientId);
        }
        var holders = input.LongestRunning(HoldersShown);
        evidence["threads_waiting_for_shards"] = waiting.ToString(CultureInfo.InvariantCulture);
        if (waiting > 0)
            seen.Add($"{waiting} threads are blocked waiting for shards" + (waitingClients.Count > 0 ? $" (for clients {string.Join(", ", waitingClients)})." : "."));
        if (holders.Count > 0)
        {
            string running = string.Join("; ", holders.Select(DoctorInput.Describe));
            seen.Add($"Longest-running commands now: {running}.");
            evidence["longest_running"] = running;
        }
        if (input.WaitStacks is { Count: > 0 } stacks)
        {
            var parts = new List<string>();
            foreach (var stack in stacks)
            {
                if (parts.Count == StacksShown)
                    break;
                string from = stack.ServerFrames is { } frames ? $", from {frames}" : "";
                parts.Add($"{stack.Threads} in {WaitStacks.Short(stack.BlockedIn)}{from}");
            }
            string summary = string.Join("; ", parts);
            seen.Add($"Pool threads' stacks (stacks.txt): {summary}.");
            evidence["wait_stacks"] = summary;
        }
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = FindingSeverity.Warning,
            Title = "The thread pool is starved",
            Seen = string.Join(" ", seen),
            Advice = waiting > 0
                ? "Commands for several shards wait on pool threads while a long command holds the shards they need: replace whole-keyspace commands (KEYS, FLUSHALL, DEBUG SLEEP) with SCAN and smaller batches, or CLIENT KILL the client running one; the debug package's stacks show where each thread waits."
                : "Something blocks pool threads (a long command, a wait on a busy shard, synchronous I/O): the debug package's stacks (stacks.txt, /api/stacks) show where they wait.",
            Evidence = evidence,
            Chart = MetricNames.ThreadPoolQueueLength,
        };
    }
}
