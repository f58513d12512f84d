using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// The CPU is saturated: the machine's cores are busy (by this server or by others) for most of
/// the last half minute, so commands queue for a core. Says how much is the server's, which of its
/// threads use it, and what they run.
/// </summary>
public sealed class CpuSaturationRule : IDoctorRule
{
    private const int WindowSeconds = 30;
    private const int MinSamples = 10;
    private const double BusyPercent = 90;
    private const int ThreadsShown = 3;

    public string Id => "cpu-saturation";
    public string Area => "cpu";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        var machine = input.Recent(MetricNames.CpuMachinePercent, WindowSeconds);
        if (machine.Length < MinSamples)
            yield break;
        double machineAverage = input.RecentAverage(MetricNames.CpuMachinePercent, WindowSeconds);
        int cores = Math.Max(1, input.Environment?.ProcessorCount ?? 1);
        double processAverage = input.RecentAverage(MetricNames.CpuProcessPercent, machine.Length);
        // The process's share of one core against what its cgroup allows, when it is limited.
        double processLimit = (input.Environment?.CgroupCpuLimit ?? cores) * 100;
        bool machineBusy = machineAverage >= BusyPercent;
        bool processBusy = processAverage >= processLimit * BusyPercent / 100;
        if (!machineBusy && !processBusy)
            yield break;
        double processShareOfMachine = Math.Min(100, processAverage / cores);
        double others = Math.Max(0, machineAverage - processShareOfMachine);
        var threads = BusiestThreads(input, machine.Length);
        var evidence = new Dictionary<string, string>
        {
            ["machine_cpu_percent"] = machineAverage.ToString("0", CultureInfo.InvariantCulture),
            ["process_cpu_percent"] = processAverage.ToString("0", CultureInfo.InvariantCulture),
            ["cores"] = cores.ToString(CultureInfo.InvariantCulture),
            ["other_processes_percent"] = others.ToString("0", CultureInfo.InvariantCulture),
        };
        if (threads.Length > 0)
            evidence["threads"] = threads;
        string whose = others >= processShareOfMachine
            ? $" Most of it is not this server: other processes use about {Human.Percent(others)} of the machine."
            : "";
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = FindingSeverity.Warning,
            Title = processBusy ? "The server uses all the CPU it has" : "The machine's CPU is saturated",
            Seen = $"Over the last {machine.Length} s the machine's {cores} cores were {Human.Percent(machineAverage)} busy; this server used {Human.Percent(processAverage)} of one core "
                + $"({Human.Percent(processShareOfMachine)} of the machine).{whose}"
                + (threads.Length > 0 ? $" Its busiest threads: {threads}." : ""),
            Advice = others >= processShareOfMachine
                ? "Commands wait for a core another process holds: move that process (a benchmark client, a batch job) or this server to other cores."
                : "Commands queue for a core: look at what the busiest threads run (a hot key, a scan in a loop, a script), spread the load, or give the server more cores.",
            Evidence = evidence,
            Chart = MetricNames.CpuMachinePercent,
        };
    }

    /// <summary>The server's threads by CPU over the window, each with what it runs now (or its role).</summary>
    private static string BusiestThreads(DoctorInput input, int samples)
    {
        if (input.History is null)
            return "";
        var busy = new List<(ThreadHistory Thread, double Cpu)>();
        foreach (var thread in input.History.Threads)
        {
            int count = Math.Min(samples, thread.CpuPercent.Length);
            double sum = 0;
            for (int i = thread.CpuPercent.Length - count; i < thread.CpuPercent.Length; i++)
                sum += thread.CpuPercent[i];
            if (count > 0 && sum / count >= 5)
                busy.Add((thread, sum / count));
        }
        busy.Sort((a, b) => b.Cpu.CompareTo(a.Cpu));
        var parts = new List<string>();
        foreach (var (thread, cpu) in busy)
        {
            if (parts.Count == ThreadsShown)
                break;
            parts.Add($"{thread.Name} ({thread.OsThreadId}) {Human.Percent(cpu)}, {HotThreadRule.WhatItRuns(input, thread)}");
        }
        return string.Join("; ", parts);
    }
}
