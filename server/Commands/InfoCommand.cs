using Diagnostics.Server.Diagnostics;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// INFO [section ...]. Runs on the connection thread (Connection flag): its figures are read
/// without parking any shard, so a busy server answers INFO at once, slightly stale.
/// </summary>
public static class InfoCommand
{
    public static void Register(CommandTable table)
    {
        table.Add(new CommandSpec("info", -1, Connection | Loading | Stale, 0, 0, 0, Info, "server",
            "Returns information and statistics about the server.", "1.0.0")
        { Arguments = [new("section", "string", Optional: true, Multiple: true)] });
    }

    private static void Info(ref CommandContext c)
    {
        var sections = new List<string>(c.ArgCount - 1);
        for (int i = 1; i < c.ArgCount; i++)
            sections.Add(c.ArgString(i));
        c.Reply.Verbatim(InfoBuilder.Build(c.Server, sections));
    }
}
