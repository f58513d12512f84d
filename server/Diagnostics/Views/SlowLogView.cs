using System.Text;
using Diagnostics.Contracts;
using Diagnostics.Server.Diagnostics.SlowCommands;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>
/// The slow log as records, newest first; arguments were redacted and cut when logged. A script's
/// source is left out (it may embed secrets, and this view goes into the debug package); the
/// script is named instead.
/// </summary>
public static class SlowLogView
{
    public static SlowLogRecord[] Build(DataServer server)
    {
        var entries = server.SlowLog.Newest(-1);
        var result = new SlowLogRecord[entries.Count];
        for (int i = 0; i < entries.Count; i++)
        {
            var entry = entries[i];
            var arguments = new string[entry.Arguments.Length];
            for (int a = 0; a < arguments.Length; a++)
                arguments[a] = a == entry.SourceArgument ? "(source not shown)" : Encoding.UTF8.GetString(entry.Arguments[a]);
            result[i] = new SlowLogRecord(entry.Id, entry.UnixSeconds, entry.DurationMicros, arguments, entry.ClientAddress, entry.ClientName)
            {
                Script = entry.Script,
                ClientId = entry.ClientId,
            };
        }
        return result;
    }

    /// <summary>Every slow call since start or SLOWLOG RESET, by command and by client.</summary>
    /// <param name="includeClients">False for a login that may not see the clients: the by-client totals name their addresses.</param>
    public static SlowLogSummary Summary(DataServer server, bool includeClients = true)
    {
        var totals = server.SlowLog.Totals();
        var commands = new SlowCommandTotal[totals.Commands.Count];
        for (int i = 0; i < commands.Length; i++)
        {
            var c = totals.Commands[i];
            commands[i] = new SlowCommandTotal(c.Command, c.Calls, c.Micros, c.MaxMicros);
        }
        var clients = new SlowClientTotal[includeClients ? totals.Clients.Count : 0];
        for (int i = 0; i < clients.Length; i++)
        {
            var c = totals.Clients[i];
            clients[i] = new SlowClientTotal(c.Id, c.Address, c.Name, c.Calls, c.MaxMicros, c.LastCommand, c.LastUnixSeconds);
        }
        return new SlowLogSummary(totals.SinceUnixSeconds, totals.Calls, commands, clients);
    }
}
