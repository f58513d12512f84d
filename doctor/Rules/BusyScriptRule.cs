using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// A Lua script or function kept the server busy: past busy-reply-threshold every other client's
/// command is refused with BUSY. Names the script (SHA1 or function) and how long it ran, from
/// INFO's scripts section, live or from a package.
/// </summary>
public sealed class BusyScriptRule : IDoctorRule
{
    public string Id => "busy-script";
    public string Area => "latency";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        long threshold = input.ConfigInt64("busy-reply-threshold");
        string thresholdText = threshold > 0 ? $"{threshold.ToString("N0", CultureInfo.InvariantCulture)} ms" : "busy-reply-threshold";
        if (input.InfoField("scripts", "script_busy") == "1")
        {
            string name = input.InfoField("scripts", "script_running_name") ?? "";
            long ms = input.InfoInt64("scripts", "script_running_ms");
            yield return new Finding
            {
                Rule = Id,
                Area = Area,
                Severity = FindingSeverity.Critical,
                Title = "A script is keeping the server busy",
                Seen = $"Script {Describe(name)} has been running for {ms.ToString("N0", CultureInfo.InvariantCulture)} ms, past busy-reply-threshold ({thresholdText}): every other client's command is answered BUSY until it ends.",
                Advice = "SCRIPT KILL (FUNCTION KILL for a function) stops it if it has not written yet; otherwise only SHUTDOWN NOSAVE ends it. Then fix the script's loop or split its work.",
                Evidence = new() { ["script"] = name, ["running_ms"] = ms.ToString(CultureInfo.InvariantCulture), ["busy-reply-threshold"] = threshold.ToString(CultureInfo.InvariantCulture) },
            };
            yield break;
        }
        long busy = input.InfoInt64("scripts", "busy_scripts_total");
        if (busy == 0)
            yield break;
        string last = input.InfoField("scripts", "last_busy_script") ?? "";
        long lastMs = input.InfoInt64("scripts", "last_busy_script_ms");
        long killed = input.InfoInt64("scripts", "killed_scripts_total");
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = FindingSeverity.Warning,
            Title = "Scripts have kept the server busy",
            Seen = $"{busy.ToString("N0", CultureInfo.InvariantCulture)} script run(s) went past busy-reply-threshold ({thresholdText}), {killed.ToString("N0", CultureInfo.InvariantCulture)} killed; the last was {Describe(last)}, {lastMs.ToString("N0", CultureInfo.InvariantCulture)} ms. While each ran, other clients got BUSY.",
            Advice = "INFO scripts lists every script's calls and slowest run (max_usec): shorten the slow one's work per call, or move it out of a script.",
            Evidence = new() { ["busy_scripts_total"] = busy.ToString(CultureInfo.InvariantCulture), ["last_busy_script"] = last, ["last_busy_script_ms"] = lastMs.ToString(CultureInfo.InvariantCulture) },
        };
    }

    private static string Describe(string name) => name.Length == 40 ? $"sha {name}" : $"function {name}";
}
