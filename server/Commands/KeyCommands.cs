using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>Generic keyspace commands.</summary>
public static class KeyCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "generic";
        table.Add(new CommandSpec("del", -2, Write, 1, -1, 1, Del, g, "Deletes one or more keys.", "1.0.0", "O(N)")
        { Arguments = [new("key", "key", Multiple: true)] });
    }

    private static void Del(ref CommandContext c)
    {
        long deleted = 0;
        for (int i = 1; i < c.ArgCount; i++)
        {
            var key = c.Arg(i);
            var db = c.Database(key, out uint hash);
            if (db.Delete(key, hash, c.NowMs))
                deleted++;
        }
        c.Reply.Integer(deleted);
    }
}
