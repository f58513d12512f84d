using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Commands;

/// <summary>The reply of every "X HELP" subcommand: an array of status lines, as Redis sends it.</summary>
public static class HelpReply
{
    public static void Write(RespWriter reply, string[] lines)
    {
        reply.ArrayHeader(lines.Length);
        foreach (string line in lines)
            reply.SimpleString(line);
    }
}
