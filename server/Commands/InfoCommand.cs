using System.Text;
using Diagnostics.Server.Diagnostics.Info;
using Microsoft.Extensions.ObjectPool;
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

    // Monitoring systems call INFO every second or faster: the text is built in a pooled builder
    // and written from it, where a fresh builder and its string cost ~20 KB of garbage a call
    // and, under load, the gen0 collections that came with it. Builders of a large reply
    // (INFO everything with many threads) are not kept.
    private static readonly ObjectPool<StringBuilder> Builders =
        new DefaultObjectPoolProvider().CreateStringBuilderPool(initialCapacity: 8 * 1024, maximumRetainedCapacity: 64 * 1024);

    private static void Info(ref CommandContext c)
    {
        var sections = new List<string>(c.ArgCount - 1);
        for (int i = 1; i < c.ArgCount; i++)
            sections.Add(c.ArgString(i));
        var text = Builders.Get();
        try
        {
            InfoBuilder.Build(text, c.Server, sections);
            c.Reply.Verbatim(text);
        }
        finally
        {
            Builders.Return(text);
        }
    }
}
