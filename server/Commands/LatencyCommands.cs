using Diagnostics.Server.Diagnostics.Latency;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// LATENCY LATEST / HISTORY / RESET / GRAPH / HISTOGRAM / DOCTOR / HELP over the server's
/// <see cref="LatencyMonitor"/> and <see cref="CommandLatency"/>, with Redis 7's replies.
/// </summary>
public static class LatencyCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "server";
        const CommandFlags f = Connection | Admin | NoScript | Loading | Stale;
        table.Add(new CommandSpec("latency", -2, Connection, 0, 0, 0, null, g, "A container for latency diagnostics commands", "2.8.13", "Depends on subcommand.")
            .WithSubcommands(
                new CommandSpec("latest", 2, f, 0, 0, 0, Latest, g, "Return the latest latency samples for all events.", "2.8.13"),
                new CommandSpec("history", 3, f, 0, 0, 0, History, g, "Return timestamp-latency samples for the event.", "2.8.13")
                { Arguments = [new("event", "string")] },
                new CommandSpec("reset", -2, f, 0, 0, 0, Reset, g, "Reset latency data for one or more events.", "2.8.13")
                { Arguments = [new("event", "string", Optional: true, Multiple: true)] },
                new CommandSpec("graph", 3, f, 0, 0, 0, Graph, g, "Return a latency graph for the event.", "2.8.13")
                { Arguments = [new("event", "string")] },
                new CommandSpec("histogram", -2, f, 0, 0, 0, Histogram, g, "Return the cumulative distribution of latencies of a subset of commands or all.", "7.0.0",
                    "O(N) where N is the number of commands with latency information being retrieved.")
                { Arguments = [new("command", "string", Optional: true, Multiple: true)] },
                DoctorCommands.LatencyDoctorSpec(),
                new CommandSpec("help", 2, Connection | Loading | Stale, 0, 0, 0, Help, g, "Show helpful text about the different subcommands.", "2.8.13")));
    }

    /// <summary>Per event: name, time of the latest sample, its latency, the all-time maximum.</summary>
    private static void Latest(ref CommandContext c)
    {
        var events = c.Server.LatencyMonitor.Events();
        c.Reply.ArrayHeader(events.Count);
        foreach (var evt in events)
        {
            c.Reply.ArrayHeader(4);
            c.Reply.Bulk(evt.Name);
            c.Reply.Integer(evt.Latest.UnixSeconds);
            c.Reply.Integer(evt.Latest.Milliseconds);
            c.Reply.Integer(evt.MaxMilliseconds);
        }
    }

    /// <summary>The event's [time, latency] samples, oldest first; empty for an event without samples.</summary>
    private static void History(ref CommandContext c)
    {
        var evt = c.Server.LatencyMonitor.Find(c.ArgString(2));
        if (evt is null)
        {
            c.Reply.ArrayHeader(0);
            return;
        }
        c.Reply.ArrayHeader(evt.Samples.Count);
        foreach (var sample in evt.Samples)
        {
            c.Reply.ArrayHeader(2);
            c.Reply.Integer(sample.UnixSeconds);
            c.Reply.Integer(sample.Milliseconds);
        }
    }

    /// <summary>Drops the named events (every event without names); replies how many were dropped.</summary>
    private static void Reset(ref CommandContext c)
    {
        var monitor = c.Server.LatencyMonitor;
        if (c.ArgCount == 2)
        {
            c.Reply.Integer(monitor.Reset(null));
            return;
        }
        int resets = 0;
        for (int i = 2; i < c.ArgCount; i++)
            resets += monitor.Reset(c.ArgString(i));
        c.Reply.Integer(resets);
    }

    private static void Graph(ref CommandContext c)
    {
        string name = c.ArgString(2);
        var evt = c.Server.LatencyMonitor.Find(name);
        if (evt is null)
        {
            c.Error($"ERR No samples available for event '{name}'");
            return;
        }
        c.Reply.Verbatim(LatencyGraph.Render(evt, DateTimeOffset.UtcNow.ToUnixTimeSeconds()));
    }

    /// <summary>
    /// A map of command name to {calls, histogram_usec}: every command with recorded calls, or the
    /// named ones ("config|get" names a subcommand, a container names its subcommands with data;
    /// unknown names are skipped, repeated names repeat).
    /// </summary>
    private static void Histogram(ref CommandContext c)
    {
        var specs = c.Server.Commands.AllSpecs;
        var selected = new List<(CommandSpec Spec, LatencyDistribution Distribution)>();
        if (c.ArgCount == 2)
        {
            foreach (int id in CommandLatency.CommandsWithData())
                selected.Add((specs[id], CommandLatency.Snapshot(id)));
        }
        else
        {
            for (int i = 2; i < c.ArgCount; i++)
            {
                var spec = FindByFullName(c.Server.Commands, c.ArgString(i));
                if (spec is null)
                    continue;
                AddIfRecorded(selected, spec);
                if (spec.Subcommands is not null)
                    foreach (var sub in spec.Subcommands.Values)
                        AddIfRecorded(selected, sub);
            }
        }

        c.Reply.MapHeader(selected.Count);
        foreach (var (spec, distribution) in selected)
        {
            c.Reply.Bulk(spec.FullName);
            c.Reply.MapHeader(2);
            c.Reply.Bulk("calls");
            c.Reply.Integer(distribution.Calls);
            c.Reply.Bulk("histogram_usec");
            var points = distribution.CumulativeByPowerOfTwo();
            c.Reply.MapHeader(points.Count);
            foreach (var (micros, cumulative) in points)
            {
                c.Reply.Integer(micros);
                c.Reply.Integer(cumulative);
            }
        }
    }

    private static void AddIfRecorded(List<(CommandSpec, LatencyDistribution)> selected, CommandSpec spec)
    {
        var distribution = CommandLatency.Snapshot(spec.Id);
        if (distribution.Calls > 0)
            selected.Add((spec, distribution));
    }

    /// <summary>"get" or "config|get", as Redis's lookupCommandBySds: one level of subcommands, ignoring case.</summary>
    private static CommandSpec? FindByFullName(CommandTable table, string name)
    {
        string[] parts = name.Split('|');
        if (parts.Length > 2)
            return null;
        var command = table.Find(parts[0]);
        if (parts.Length == 1 || command?.Subcommands is null)
            return parts.Length == 1 ? command : null;
        return command.Subcommands.GetValueOrDefault(parts[1]);
    }

    private static void Help(ref CommandContext c)
    {
        string[] lines =
        [
            "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "DOCTOR",
            "    Return a human readable latency analysis report.",
            "GRAPH <event>",
            "    Return an ASCII latency graph for the <event> class.",
            "HISTORY <event>",
            "    Return time-latency samples for the <event> class.",
            "LATEST",
            "    Return the latest latency samples for all events.",
            "RESET [<event> ...]",
            "    Reset latency data of one or more <event> classes.",
            "    (default: reset all data for all event classes)",
            "HISTOGRAM [COMMAND ...]",
            "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
            "    If no commands are specified then all histograms are replied.",
            "HELP",
            "    Prints this help.",
        ];
        HelpReply.Write(c.Reply, lines);
    }
}
