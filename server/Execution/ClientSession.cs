using Diagnostics.Server.Commands;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Network;
using Diagnostics.Server.Protocol;
using Diagnostics.Server.PubSub;
using Diagnostics.Server.Transactions;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Execution;

/// <summary>
/// Who a command runs for, without assuming a socket (Redis's <c>client</c> struct): the selected
/// database, the protocol and reply writer, authentication, the transaction, the name and flags.
/// A network connection is one; the AOF loader is another, and a Lua script or a replication link
/// will be: the <see cref="CommandExecutor"/> only ever sees this.
/// </summary>
public abstract class ClientSession : IDisposable
{
    protected ClientSession(long id, RespWriter reply, ILogger log, bool authenticated, IKeyspaceEvents? events)
    {
        OwnEffects = new CommandEffects(events);
        Effects = OwnEffects;
        Id = id;
        Reply = reply;
        Log = log;
        Authenticated = authenticated;
    }

    public long Id { get; }
    /// <summary>The effects scope of this client's commands, opened for each by the executor.</summary>
    public CommandEffects Effects { get; internal set; }
    /// <summary>The scope this client was made with; a script's client uses its caller's while it runs.</summary>
    internal CommandEffects OwnEffects { get; }
    public RespWriter Reply { get; }
    /// <summary>Where a command's internal failure is logged.</summary>
    internal ILogger Log { get; set; }
    public int DatabaseIndex { get; set; }
    public bool Authenticated { get; set; }
    /// <summary>The ACL user this client runs as; null for the server's own sessions (AOF loading, the master link), which ACLs do not limit.</summary>
    public Acl.AclUserSlot? User { get; set; }
    /// <summary>This client as CLIENT INFO describes it (ACL LOG's client-info); empty for the server's own sessions.</summary>
    public virtual string Describe() => "";
    public string? Name { get; set; }
    public string? LibName { get; set; }
    public string? LibVersion { get; set; }
    public ReplyMode ReplyMode { get; set; }
    /// <summary>CLIENT REPLY SKIP: the next command's reply is dropped.</summary>
    public bool SkipNextReply { get; set; }
    public bool NoEvict { get; set; }
    public bool NoTouch { get; set; }
    /// <summary>QUIT (or a kill of itself): nothing more runs for this client.</summary>
    public bool CloseAfterReply { get; set; }
    /// <summary>The command running or last run (CLIENT LIST cmd=).</summary>
    public CommandSpec? LastCommand { get; internal set; }
    public long CommandsProcessed { get; internal set; }
    /// <summary>The peer's address; empty for a client without a socket.</summary>
    public virtual string Address => "";

    /// <summary>
    /// Which client-output-buffer-limit applies (and what CLIENT LIST/KILL TYPE match): normal until
    /// the client subscribes, when the pub/sub commands make it <see cref="ClientClass.PubSub"/>.
    /// </summary>
    public ClientClass Class { get; set; } = ClientClass.Normal;

    /// <summary>MULTI's queue and WATCH's keys; null until the client first uses either.</summary>
    public Transaction? Transaction { get; private set; }

    /// <summary>The transaction state, created on first use (MULTI, WATCH).</summary>
    internal Transaction OpenTransaction() => Transaction ??= new Transaction();

    /// <summary>True between MULTI and EXEC/DISCARD (CLIENT LIST flag x).</summary>
    public bool InMulti => Transaction is { InMulti: true };

    /// <summary>True while EXEC runs a transaction: blocking commands answer at once instead of waiting.</summary>
    public bool InTransaction { get; internal set; }

    /// <summary>Set by a blocking command that found nothing: the connection waits on it before running anything else.</summary>
    internal BlockedClient? PendingBlock { get; set; }

    /// <summary>
    /// Set by a command that gave itself back unrun: a script that may run long, on a thread that
    /// also serves other sockets (see ScriptEngine.Run). Nothing was replied or counted; the
    /// connection runs it again from a pool thread.
    /// </summary>
    internal bool RunElsewhere { get; set; }

    /// <summary>Which command of the current batch is running (a blocked client is served by it).</summary>
    internal int CurrentCommandIndex { get; set; }

    /// <summary>This client's writes not yet handed to the AOF, encoded (the executor fills it while the AOF is on).</summary>
    internal Persistence.AofRecordBuffer? LoggedWrites;
    /// <summary>The AOF offset just past this client's last writes: its replies wait until the AOF has them as safe as appendfsync promises.</summary>
    internal long AofWaitOffset;

    /// <summary>The channels and patterns this client subscribed to; null for a client that cannot subscribe (no one to deliver to).</summary>
    public ClientSubscriptions? PubSub { get; protected init; }

    /// <summary>MONITOR: every command the server runs is sent to this client (CLIENT LIST flag O); set by <see cref="CommandMonitors"/>.</summary>
    public bool IsMonitor { get; internal set; }

    /// <summary>CLIENT TRACKING settings, or null while the client does not track keys.</summary>
    public Tracking.ClientTracking? Tracking { get; internal set; }

    /// <summary>
    /// The next command run for this client is a command run again (a blocked one now that its key
    /// has a value, or a script that gave itself back): MONITOR showed it when it first ran. The
    /// executor clears it.
    /// </summary>
    internal bool Reprocessing { get; set; }

    /// <summary>Who client-side caching counts this client's reads and writes for: itself, or a script's caller (Redis's script_caller).</summary>
    internal virtual ClientSession TrackingIdentity => this;

    /// <summary>The client of this replica's master link: its writes pass read-only and maxmemory, its expired keys still exist.</summary>
    internal virtual bool IsMaster => false;

    /// <summary>A script's client (redis.call): MONITOR shows its commands as "lua", and a busy script's own commands still run.</summary>
    internal virtual bool RunsScripts => false;

    /// <summary>Whether this client can be sent MONITOR's lines (a client without a socket cannot).</summary>
    internal virtual bool CanMonitor => false;

    /// <summary>One MONITOR line, from whichever thread ran the command; delivered in this client's own time.</summary>
    internal virtual void DeliverMonitorLine(byte[] line) { }

    /// <summary>Channels and patterns subscribed to.</summary>
    public int Subscriptions => PubSub?.Count ?? 0;

    /// <summary>
    /// In RESP2 a subscribed client only takes the pub/sub commands, PING, QUIT and RESET, as
    /// in Redis; RESP3 clients may run anything while subscribed.
    /// </summary>
    internal bool RefusedWhileSubscribed(CommandSpec spec)
        => Reply.Protocol == 2 && Subscriptions > 0 && (spec.Flags & CommandFlags.SubscribedContext) == 0;

    /// <summary>An unsubscribe reply is about to be written: a subscriber first writes what was published while the subscription lasted.</summary>
    internal virtual void BeforeUnsubscribeReply() { }

    /// <summary>EXEC is about to write its reply: a subscriber first writes what was published before it.</summary>
    internal virtual void BeforeExecReply() { }

    /// <summary>
    /// RESET (<paramref name="deliverQueued"/>: what was published before it still goes out, ahead
    /// of its reply) and disconnect: leave every channel and pattern.
    /// </summary>
    internal virtual void UnsubscribeAll(bool deliverQueued) { }

    /// <summary>RESET and disconnect: leave any MULTI and WATCH behind.</summary>
    internal void ResetTransaction()
    {
        if (Transaction is null)
            return;
        Transaction.EndMulti();
        Transaction.Unwatch();
    }

    public virtual void Dispose()
    {
        LoggedWrites?.Dispose();
        Transaction?.Dispose();
    }
}
