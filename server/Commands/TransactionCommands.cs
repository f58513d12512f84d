using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>MULTI, EXEC, DISCARD, WATCH and UNWATCH; the state and the work are the connection's.</summary>
public static class TransactionCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "transactions";
        const CommandFlags control = NoScript | Loading | Stale | Fast | AllowBusy | TransactionControl;
        table.Add(new CommandSpec("multi", 1, control | Connection, 0, 0, 0, Multi, g, "Starts a transaction.", "1.2.0"));
        table.Add(new CommandSpec("exec", 1, NoScript | Loading | Stale | SkipSlowlog | TransactionControl, 0, 0, 0, Exec, g,
            "Executes all commands in a transaction.", "1.2.0", "Depends on commands in the transaction"));
        table.Add(new CommandSpec("discard", 1, control | Connection, 0, 0, 0, Discard, g, "Discards a transaction.", "2.0.0",
            "O(N), when N is the number of queued commands"));
        table.Add(new CommandSpec("watch", -2, control, 1, -1, 1, Watch, g,
            "Monitors changes to keys to determine the execution of a transaction.", "2.2.0", "O(1) for every key.")
        { Arguments = [new("key", "key", Multiple: true)] });
        table.Add(new CommandSpec("unwatch", 1, NoScript | Loading | Stale | Fast | AllowBusy | Connection, 0, 0, 0, Unwatch, g,
            "Forgets about watched keys of a transaction.", "2.2.0"));
    }

    private static void Multi(ref CommandContext c) => c.Client.Multi(ref c);
    private static void Exec(ref CommandContext c) => c.Client.Exec(ref c);
    private static void Discard(ref CommandContext c) => c.Client.Discard(ref c);
    private static void Watch(ref CommandContext c) => c.Client.Watch(ref c);
    private static void Unwatch(ref CommandContext c) => c.Client.Unwatch(ref c);
}
