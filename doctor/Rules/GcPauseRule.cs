using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>Garbage collection pauses take a noticeable share of time: every command waits through them.</summary>
public sealed class GcPauseRule : IDoctorRule
{
    private const double WarnMillisPerSecond = 20;
    private const double WarnWorstMillis = 200;
    // An average over a few seconds is one pause: a server seconds old (the start-up collection
    // on a busy machine) would be judged on it. Below this many samples only a long pause counts.
    private const int MinSamplesForAverage = 10;

    public string Id => "gc-pauses";
    public string Area => "runtime";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        var recent = input.Recent(MetricNames.GcPauseMillisPerSecond, 60);
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
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = average >= 50 ? FindingSeverity.Warning : FindingSeverity.Info,
            Title = "Garbage collection pauses are long",
            Seen = $"Over the last {recent.Length} s the GC paused the process {average:0.#} ms per second on average ({Human.Percent(average / 10)} of the time), up to {worst:0} ms in one second.",
            Advice = "Pauses stop every command. Keys and values live outside the managed heap; look at what allocates (managed_allocated_bytes_per_sec, the Memory page) and at the runtime report (runtime.json).",
            Evidence = new() { ["pause_ms_per_s_avg"] = average.ToString("0.##", System.Globalization.CultureInfo.InvariantCulture), ["pause_ms_per_s_max"] = worst.ToString("0.##", System.Globalization.CultureInfo.InvariantCulture) },
            Chart = MetricNames.GcPauseMillisPerSecond,
        };
    }
}
