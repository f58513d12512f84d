using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>MONITOR: the client is sent every command the server runs from now on (see <see cref="Execution.CommandMonitors"/>).</summary>
public static class MonitorCommand
{
    public static void Register(CommandTable table)
    {
        table.Add(new CommandSpec("monitor", 1, Admin | NoScript | Loading | Stale | Connection, 0, 0, 0, Monitor, "server",
            "Listen for all requests received by the server in real time", "1.0.0", complexity: ""));
    }

    private static void Monitor(ref CommandContext c)
    {
        var client = c.Client;
        // Inside EXEC a client expects one reply per command, which a monitor's stream is not.
        if (client.InTransaction)
        {
            c.Error("ERR MONITOR isn't allowed for DENY BLOCKING client");
            return;
        }
        if (!client.CanMonitor)
        {
            c.Error("ERR MONITOR needs a client connection to stream to");
            return;
        }
        // Already a monitor: Redis ignores the command, without a reply.
        if (c.Server.Monitors.Add(client))
            c.Reply.Ok();
    }
}
