using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// Garbage collection pauses take a noticeable share of time: every command waits through them.
/// Says how fast the heap is being filled, how many full collections that caused, and what
/// allocates: the commands (managed bytes per call) and, with a monitor attached, the types.
/// </summary>
public sealed class GcPauseRule : IDoctorRule
{
    private const double WarnMillisPerSecond = 20;
    private const double WarnWorstMillis = 200;
    private const int WindowSeconds = 60;
    // An average over a few seconds is one pause: a server seconds old (the start-up collection
    // on a busy machine) would be judged on it. Below this many samples only a long pause counts.
    private const int MinSamplesForAverage = 10;
    private const int CommandsShown = 3;
    private const int TypesShown = 3;

    public string Id => "gc-pauses";
    public string Area => "runtime";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        var recent = input.Recent(MetricNames.GcPauseMillisPerSecond, WindowSeconds);
        if (recent.Length == 0)
            yield break;
        double sum = 0, worst = 0;
        foreach (double value in recent)
        {
            sum += value;
            worst = Math.Max(worst, value);
        }
        double average = sum / recent.Length;
        bool sustained = recent.Length >= MinSamplesForAverage && average >= WarnMillisPerSecond;
        if (!sustained && worst < WarnWorstMillis)
            yield break;
        double allocationRate = input.RecentAverage(MetricNames.ManagedAllocatedBytesPerSecond, recent.Length);
        long gen2 = input.RecentCount(MetricNames.Gen2CollectionsPerSecond, recent.Length);
        var evidence = new Dictionary<string, string>
        {
            ["pause_ms_per_s_avg"] = average.ToString("0.##", CultureInfo.InvariantCulture),
            ["pause_ms_per_s_max"] = worst.ToString("0.##", CultureInfo.InvariantCulture),
            ["allocated_bytes_per_s"] = ((long)allocationRate).ToString(CultureInfo.InvariantCulture),
            ["gen2_collections"] = gen2.ToString(CultureInfo.InvariantCulture),
        };
        var seen = new List<string>
        {
            $"Over the last {recent.Length} s the GC paused the process {average:0.#} ms per second on average ({Human.Percent(average / 10)} of the time), up to {worst:0} ms in one second,"
                + $" while the server allocated {Human.Bytes(allocationRate)}/s on the managed heap, with {Human.Count(gen2)} full (gen2) collections.",
        };
        if (TopAllocatingCommands(input) is { Length: > 0 } commands)
        {
            seen.Add($"Commands that allocate the most: {commands}.");
            evidence["top_commands"] = commands;
        }
        if (TopTypes(input) is { Length: > 0 } types)
        {
            seen.Add($"Allocated types (the monitor's allocation samples): {types}.");
            evidence["top_types"] = types;
        }
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = average >= 50 ? FindingSeverity.Warning : FindingSeverity.Info,
            Title = "Garbage collection pauses are long",
            Seen = string.Join(" ", seen),
            Advice = "Pauses stop every command. Keys and values live outside the managed heap, so the heap fills with what commands and the API build: "
                + "call the commands named less often (CLIENT LIST, INFO everything, KEYS are the usual ones; scrape /metrics instead of polling INFO), and attach the monitor to see the types.",
            Evidence = evidence,
            Chart = MetricNames.GcPauseMillisPerSecond,
        };
    }

    /// <summary>Commands by managed bytes allocated in all (since start or CONFIG RESETSTAT), with their bytes per call.</summary>
    private static string TopAllocatingCommands(DoctorInput input)
    {
        var measured = new List<CommandStatistics>();
        foreach (var command in input.Commands)
            if (command.AllocatedBytes is > 0 && command.Calls > 0)
                measured.Add(command);
        measured.Sort((a, b) => b.AllocatedBytes!.Value.CompareTo(a.AllocatedBytes!.Value));
        var parts = new List<string>();
        foreach (var command in measured)
        {
            if (parts.Count == CommandsShown)
                break;
            long total = command.AllocatedBytes!.Value;
            parts.Add($"{command.Name} {Human.Bytes((double)total / command.Calls)} a call ({Human.Bytes(total)} in {Human.Count(command.Calls)} calls)");
        }
        return string.Join(", ", parts);
    }

    private static string TopTypes(DoctorInput input)
    {
        if (input.Monitor is not { TopAllocations.Count: > 0 } monitor)
            return "";
        var parts = new List<string>();
        foreach (var type in monitor.TopAllocations)
        {
            if (parts.Count == TypesShown)
                break;
            parts.Add($"{type.TypeName} (about {Human.Bytes(type.Bytes)})");
        }
        return string.Join(", ", parts);
    }
}
