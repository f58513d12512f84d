using Diagnostics.Server.Engine;
using Diagnostics.Server.Execution;
using Diagnostics.Server.Protocol;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Scripting;

/// <summary>
/// The client a script's redis.call runs commands for (Redis's script client): no socket, its
/// replies written to memory and read back into Lua. One per VM, lent to each run: it takes the
/// caller's database, effects scope and AOF buffer for the run's duration, so the script's writes
/// raise the caller's keyspace events, serve blocked clients after the script, and reach the AOF
/// with the caller's other writes. Blocking commands answer at once inside a script (it runs as a
/// transaction does).
/// </summary>
internal sealed class ScriptClient : ClientSession
{
    private ScriptClient(DataServer server, ScriptReplyBuffer output, ILogger log)
        : base(server.Clients.NextId(), new RespWriter(output), log, authenticated: true, events: null)
    {
        Output = output;
        InTransaction = true;
    }

    public static ScriptClient For(DataServer server, ILogger log) => new(server, new ScriptReplyBuffer(), log);

    public ScriptReplyBuffer Output { get; }

    /// <summary>No peer, as Redis's script client: "?:0" in the slow log.</summary>
    public override string Address => "?:0";

    /// <summary>MONITOR shows a script's commands as "[db lua]", as Redis does.</summary>
    internal override bool RunsScripts => true;

    private ClientSession? _caller;

    /// <summary>A script's reads and writes count for its caller in client-side caching, as in Redis.</summary>
    internal override ClientSession TrackingIdentity => _caller ?? this;

    /// <summary>Takes the caller's place for one run.</summary>
    public void Lend(ClientSession caller, Persistence.AofRecordBuffer? log)
    {
        _caller = caller;
        // The script's commands are checked against its caller's ACL user, as in Redis.
        User = caller.User;
        Tracking = caller.Tracking;
        DatabaseIndex = caller.DatabaseIndex;
        Reply.Protocol = 2;
        LoggedWrites = log;
        Effects = caller.Effects;
    }

    /// <summary>Gives back what <see cref="Lend"/> borrowed.</summary>
    public void Return()
    {
        _caller = null;
        User = null;
        Tracking = null;
        LoggedWrites = null;
        Effects = OwnEffects;
    }

    public override void Dispose()
    {
        LoggedWrites = null;
        base.Dispose();
    }
}
