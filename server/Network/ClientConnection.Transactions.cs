namespace Diagnostics.Server.Network;

/// <summary>What CLIENT LIST shows of this connection's transaction (the state is in Transactions/).</summary>
public sealed partial class ClientConnection
{
    /// <summary>Commands queued since MULTI, or -1 outside one (CLIENT LIST multi=).</summary>
    public int QueuedCommands => Transaction?.QueuedCommands ?? -1;

    /// <summary>Bytes the queued commands hold (CLIENT LIST multi-mem).</summary>
    public long QueuedBytes => Transaction?.QueuedBytes ?? 0;
}
