using System.Text;

namespace Diagnostics.Server.Network;

/// <summary>The CLIENT LIST / CLIENT INFO line: Redis's fields in Redis's order, then this server's own.</summary>
public static class ClientDescription
{
    public static void Append(StringBuilder text, ClientConnection client, long nowMs)
    {
        long age = (nowMs - client.CreatedMs) / 1000;
        long idle = (nowMs - client.LastInteractionMs) / 1000;
        long qbuf = client.QueryBufferBytes;
        long arena = client.ArenaCapacity;
        text.Append("id=").Append(client.Id)
            .Append(" addr=").Append(client.Address)
            .Append(" laddr=").Append(client.LocalAddress)
            .Append(" fd=").Append(client.FileDescriptor)
            .Append(" name=").Append(client.Name)
            .Append(" age=").Append(age)
            .Append(" idle=").Append(idle)
            .Append(" flags=").Append(Flags(client))
            .Append(" db=").Append(client.DatabaseIndex)
            .Append(" sub=0 psub=0 ssub=0 multi=-1")
            .Append(" qbuf=").Append(qbuf)
            .Append(" qbuf-free=").Append(Math.Max(0, arena - client.ArgvBytes))
            .Append(" argv-mem=").Append(client.ArgvBytes)
            .Append(" multi-mem=0 rbs=").Append(arena)
            .Append(" rbp=").Append(client.ArgvBytes)
            .Append(" obl=0 oll=0 omem=0")
            .Append(" tot-mem=").Append(arena + qbuf)
            .Append(" events=r")
            .Append(" cmd=").Append(client.LastCommand?.FullName ?? "NULL")
            .Append(" user=default redir=-1")
            .Append(" resp=").Append(client.Reply.Protocol)
            .Append(" lib-name=").Append(client.LibName)
            .Append(" lib-ver=").Append(client.LibVersion)
            .Append(" tot-net-in=").Append(client.NetInputBytes)
            .Append(" tot-net-out=").Append(client.NetOutputBytes)
            .Append(" tot-cmds=").Append(client.CommandsProcessed)
            .Append('\n');
    }

    public static string Flags(ClientConnection client)
    {
        var flags = new StringBuilder();
        if (client.CloseAfterReply)
            flags.Append('c');
        if (client.NoEvict)
            flags.Append('e');
        if (client.NoTouch)
            flags.Append('T');
        return flags.Length == 0 ? "N" : flags.ToString();
    }
}
