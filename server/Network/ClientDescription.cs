using System.Text;

namespace Diagnostics.Server.Network;

/// <summary>
/// The CLIENT LIST / CLIENT INFO line: Redis's fields in Redis's order, then this server's own.
/// Output fields: obl is the reply bytes in the block being filled (not yet handed to the pipe),
/// oll the output blocks (4 KB or more each) still holding unsent replies, the one being filled
/// included, and omem every reply byte produced and not yet accepted by the kernel, which is
/// what client-output-buffer-limit measures. events has "w" while there is output to send.
/// </summary>
public static class ClientDescription
{
    /// <summary>The line without its newline (log messages about a client).</summary>
    public static string Describe(ClientConnection client, long nowMs)
    {
        var text = new StringBuilder();
        Append(text, client, nowMs);
        return text.ToString(0, text.Length - 1);
    }

    public static void Append(StringBuilder text, ClientConnection client, long nowMs)
    {
        long age = (nowMs - client.CreatedMs) / 1000;
        long idle = (nowMs - client.LastInteractionMs) / 1000;
        long qbuf = client.QueryBufferBytes;
        long arena = client.ArenaCapacity;
        long omem = client.UnsentBytes;
        text.Append("id=").Append(client.Id)
            .Append(" addr=").Append(client.Address)
            .Append(" laddr=").Append(client.LocalAddress)
            .Append(" fd=").Append(client.FileDescriptor)
            .Append(" name=").Append(client.Name)
            .Append(" age=").Append(age)
            .Append(" idle=").Append(idle)
            .Append(" flags=").Append(Flags(client))
            .Append(" db=").Append(client.DatabaseIndex)
            .Append(" sub=").Append(client.SubscribedChannels).Append(" psub=").Append(client.SubscribedPatterns).Append(" ssub=0 multi=").Append(client.QueuedCommands)
            .Append(" qbuf=").Append(qbuf)
            .Append(" qbuf-free=").Append(client.QueryBufferFreeBytes)
            .Append(" argv-mem=").Append(client.ArgvBytes)
            .Append(" multi-mem=").Append(client.QueuedBytes).Append(" rbs=").Append(arena)
            .Append(" rbp=").Append(client.ArgvBytes)
            .Append(" obl=").Append(client.Reply.OpenBlockBytes)
            .Append(" oll=").Append(client.OutputBlocks)
            .Append(" omem=").Append(omem)
            .Append(" tot-mem=").Append(client.MemoryUsage)
            .Append(omem > 0 ? " events=rw" : " events=r")
            .Append(" cmd=").Append(client.LastCommand?.FullName ?? "NULL")
            .Append(" user=").Append(client.User?.Name ?? "default").Append(" redir=").Append(client.Tracking?.RedirectId ?? -1)
            .Append(" resp=").Append(client.Reply.Protocol)
            .Append(" lib-name=").Append(client.LibName)
            .Append(" lib-ver=").Append(client.LibVersion)
            .Append(" tot-net-in=").Append(client.NetInputBytes)
            .Append(" tot-net-out=").Append(client.NetOutputBytes)
            .Append(" tot-cmds=").Append(client.CommandsProcessed)
            .Append('\n');
    }

    /// <summary>
    /// A replica's master client, listed as Redis lists it (flags=M, addr= the master): no socket
    /// of the listener's, so the buffer fields are what the link holds.
    /// </summary>
    public static void Append(StringBuilder text, Replication.MasterClient client, long nowMs)
    {
        long qbuf = client.QueryBufferBytes;
        text.Append("id=").Append(client.Id)
            .Append(" addr=").Append(client.Address)
            .Append(" laddr=").Append(client.LocalAddress)
            .Append(" fd=").Append(client.FileDescriptor)
            .Append(" name=").Append(client.Name)
            .Append(" age=").Append((nowMs - client.CreatedMs) / 1000)
            .Append(" idle=").Append(Math.Max(0, nowMs - client.LastInteractionMs) / 1000)
            .Append(" flags=M").Append(client.InMulti ? "x" : "")
            .Append(" db=").Append(client.DatabaseIndex)
            .Append(" sub=0 psub=0 ssub=0 multi=").Append(client.Transaction?.QueuedCommands ?? -1)
            .Append(" qbuf=").Append(qbuf)
            .Append(" qbuf-free=0 argv-mem=0 multi-mem=").Append(client.Transaction is { InMulti: true } t ? t.QueuedBytes : 0)
            .Append(" rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=").Append(qbuf)
            .Append(" events=r cmd=").Append(client.LastCommand?.FullName ?? "NULL")
            .Append(" user=default redir=-1 resp=2 lib-name= lib-ver=")
            .Append(" tot-net-in=").Append(client.NetInputBytes)
            .Append(" tot-net-out=").Append(client.NetOutputBytes)
            .Append(" tot-cmds=").Append(client.CommandsProcessed)
            .Append('\n');
    }

    /// <summary>Redis's flag letters, in Redis's order.</summary>
    public static string Flags(ClientConnection client)
    {
        var flags = new StringBuilder();
        if (client.IsMonitor)
            flags.Append('O');
        if (client.Subscriptions > 0)
            flags.Append('P');
        if (client.InMulti)
            flags.Append('x');
        // A client held by CLIENT PAUSE is a blocked client to Redis.
        if (client.Blocked is not null || client.Paused)
            flags.Append('b');
        if (client.Tracking is { } tracking)
        {
            flags.Append('t');
            if (tracking.BrokenRedirect)
                flags.Append('R');
            if (tracking.Broadcast)
                flags.Append('B');
        }
        if (client.CloseAfterReply)
            flags.Append('c');
        if (client.NoEvict)
            flags.Append('e');
        if (client.NoTouch)
            flags.Append('T');
        return flags.Length == 0 ? "N" : flags.ToString();
    }
}
