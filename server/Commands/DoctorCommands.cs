using System.Text;
using Diagnostics.Contracts;
using Diagnostics.Server.Diagnostics.Latency;
using Diagnostics.Server.Diagnostics.Views;

namespace Diagnostics.Server.Commands;

/// <summary>
/// LATENCY DOCTOR and MEMORY DOCTOR: the doctor's findings for their area, worded as Redis's
/// doctors talk (to Dave and to Sam), from the same rules the HTTP API, the studio and an
/// offline debug package use.
/// </summary>
public static class DoctorCommands
{
    private static readonly string[] LatencyAreas = ["latency", "runtime", "cpu"];
    private static readonly string[] LatencyRules = ["fsync-latency"];
    private static readonly string[] MemoryAreas = ["memory"];
    private static readonly string[] MemoryRules = ["client-output-buffer", "evictions"];

    public static CommandSpec LatencyDoctorSpec() =>
        new("doctor", 2, CommandFlags.Connection | CommandFlags.Admin | CommandFlags.NoScript | CommandFlags.Loading | CommandFlags.Stale | CommandFlags.Diagnostic, 0, 0, 0,
            LatencyDoctor, "server", "Return a human readable latency analysis report.", "2.8.13");

    public static void LatencyDoctor(ref CommandContext c)
    {
        if (c.Server.LatencyMonitor.ThresholdMilliseconds == 0 && c.Server.LatencyMonitor.Events().Count == 0)
        {
            c.Reply.Verbatim("I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n");
            return;
        }
        var findings = Select(Examine(ref c), LatencyAreas, LatencyRules);
        c.Reply.Verbatim(findings.Count == 0
            ? "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sleep tonight.\n"
            : Report("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?", findings,
                "I have a few advices for you:"));
    }

    public static void MemoryDoctor(ref CommandContext c)
    {
        var findings = Select(Examine(ref c), MemoryAreas, MemoryRules);
        if (findings.Count == 0)
        {
            c.Reply.Verbatim(Memory.TrackedAllocator.TotalBytes < 5 * 1024 * 1024
                ? "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n"
                : "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n");
            return;
        }
        c.Reply.Verbatim(Report("Sam, I detected a few issues in this Redis instance memory implants:", findings, "I'm here to keep you safe, Sam. I want to help you."));
    }

    /// <summary>
    /// The findings over what the caller's user may see, as the studio and API give them: a user
    /// allowed a doctor but not CLIENT LIST or SCAN is told of no client's address or key's name.
    /// </summary>
    private static DoctorReport Examine(ref CommandContext c) =>
        DoctorView.Examine(c.Server, c.Server.StudioPermissions.Of((c.Client.User ?? c.Server.Acl.Default).Current));

    private static List<Finding> Select(DoctorReport report, string[] areas, string[] rules)
    {
        var selected = new List<Finding>();
        foreach (var finding in report.Findings)
            if (Array.IndexOf(areas, finding.Area) >= 0 || Array.IndexOf(rules, finding.Rule) >= 0)
                selected.Add(finding);
        return selected;
    }

    private static string Report(string opening, List<Finding> findings, string closing)
    {
        var text = new StringBuilder(opening).Append("\n\n");
        for (int i = 0; i < findings.Count; i++)
            text.Append(i + 1).Append(". ").Append(findings[i].Title).Append(": ").Append(findings[i].Seen).Append('\n');
        text.Append('\n').Append(closing).Append("\n\n");
        foreach (var finding in findings)
            text.Append("- ").Append(finding.Advice).Append('\n');
        return text.ToString();
    }
}
