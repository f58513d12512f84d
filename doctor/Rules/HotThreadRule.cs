using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>One thread uses most of a core while the process has more to give: a bottleneck.</summary>
public sealed class HotThreadRule : IDoctorRule
{
    private const float BusyPercent = 90;
    private const int Window = 10;

    public string Id => "hot-thread";
    public string Area => "cpu";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        if (input.History is null)
            yield break;
        foreach (var thread in input.History.Threads)
        {
            var cpu = thread.CpuPercent;
            int count = Math.Min(Window, cpu.Length);
            if (count < Window)
                continue;
            float sum = 0;
            for (int i = cpu.Length - count; i < cpu.Length; i++)
                sum += cpu[i];
            float average = sum / count;
            if (average < BusyPercent)
                continue;
            yield return new Finding
            {
                Rule = Id,
                Area = Area,
                Severity = FindingSeverity.Warning,
                Title = $"Thread '{thread.Name}' is saturated",
                Seen = $"Thread {thread.OsThreadId} '{thread.Name}' ({thread.Role}) used {average:0}% of a core over the last {count} seconds; it runs {WhatItRuns(input, thread)}.",
                Advice = thread.Role.StartsWith("shard executor", StringComparison.Ordinal)
                    ? "One shard's executor is the bottleneck: its keys are hot. Spread hot keys, or run more shards."
                    : "A saturated thread caps throughput and adds queueing delay: what it runs is named (the command in flight, the hot key); stacks.txt shows where.",
                Evidence = new()
                {
                    ["tid"] = thread.OsThreadId.ToString(System.Globalization.CultureInfo.InvariantCulture),
                    ["cpu_percent_avg"] = average.ToString("0", System.Globalization.CultureInfo.InvariantCulture),
                    ["runs"] = WhatItRuns(input, thread),
                },
                Chart = MetricNames.CpuProcessPercent,
            };
        }
    }

    /// <summary>
    /// What a thread runs, as far as the input tells: the work in its in-flight slot now, the hot
    /// key when one stands out, else its role.
    /// </summary>
    public static string WhatItRuns(DoctorInput input, ThreadHistory thread)
    {
        foreach (var work in input.InFlight)
        {
            if (work.OsThreadId != thread.OsThreadId)
                continue;
            string client = work.ClientId != 0 ? $" for client {work.ClientId}" : "";
            return $"{work.Activity}{client} (running {Human.Micros(work.ElapsedMicros)})";
        }
        string hot = input.HotKeys is { Keys.Count: > 0 } hotKeys && hotKeys.Keys[0].Share >= 0.25
            ? $"; the hottest key is '{hotKeys.Keys[0].Key}' ({Human.Percent(hotKeys.Keys[0].Share * 100)} of commands, {hotKeys.Keys[0].Command})"
            : "";
        return $"{thread.Role} work{hot}";
    }
}
