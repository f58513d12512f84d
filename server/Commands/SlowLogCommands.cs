using Diagnostics.Server.Diagnostics.SlowCommands;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>SLOWLOG GET / LEN / RESET / HELP over the server's <see cref="SlowLog"/>.</summary>
public static class SlowLogCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "server";
        const CommandFlags f = Connection | Admin | Loading | Stale;
        table.Add(new CommandSpec("slowlog", -2, Connection, 0, 0, 0, null, g, "A container for slow log commands.", "2.2.12", "Depends on subcommand.")
            .WithSubcommands(
                new CommandSpec("get", -2, f, 0, 0, 0, Get, g, "Returns the slow log's entries.", "2.2.12",
                    "O(N) where N is the number of entries returned")
                { Arguments = [new("count", "integer", Optional: true)] },
                new CommandSpec("len", 2, f, 0, 0, 0, Len, g, "Returns the number of entries in the slow log.", "2.2.12"),
                new CommandSpec("reset", 2, f, 0, 0, 0, Reset, g, "Clears all entries from the slow log.", "2.2.12",
                    "O(N) where N is the number of entries in the slowlog"),
                new CommandSpec("help", 2, Connection | Loading | Stale, 0, 0, 0, Help, g, "Show helpful text about the different subcommands", "6.2.0")));
    }

    /// <summary>Each entry: id, unix time, microseconds, arguments, client address, client name (Redis's six fields).</summary>
    private static void Get(ref CommandContext c)
    {
        long count = 10;
        if (c.ArgCount > 3)
        {
            c.Error(Errors.WrongArity(c.Spec.FullName));
            return;
        }
        if (c.ArgCount == 3 && (!Protocol.NumberFormat.TryParseInt64(c.Arg(2), out count) || count < -1))
        {
            c.Error("ERR count should be greater than or equal to -1");
            return;
        }
        var entries = c.Server.SlowLog.Newest(count);
        c.Reply.ArrayHeader(entries.Count);
        foreach (var entry in entries)
        {
            c.Reply.ArrayHeader(6);
            c.Reply.Integer(entry.Id);
            c.Reply.Integer(entry.UnixSeconds);
            c.Reply.Integer(entry.DurationMicros);
            c.Reply.ArrayHeader(entry.Arguments.Length);
            foreach (var argument in entry.Arguments)
                c.Reply.Bulk(argument);
            c.Reply.Bulk(entry.ClientAddress);
            c.Reply.Bulk(entry.ClientName);
        }
    }

    private static void Len(ref CommandContext c) => c.Reply.Integer(c.Server.SlowLog.Length);

    private static void Reset(ref CommandContext c)
    {
        c.Server.SlowLog.Reset();
        c.Reply.Ok();
    }

    private static void Help(ref CommandContext c)
    {
        string[] lines =
        [
            "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GET [<count>]",
            "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
            "    Entries are made of:",
            "    id, timestamp, time in microseconds, arguments array, client IP and port,",
            "    client name",
            "LEN",
            "    Return the length of the slowlog.",
            "RESET",
            "    Reset the slowlog.",
            "HELP",
            "    Prints this help.",
        ];
        HelpReply.Write(c.Reply, lines);
    }
}
