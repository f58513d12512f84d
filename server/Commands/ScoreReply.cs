using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Commands;

/// <summary>Sorted-set scores in replies.</summary>
internal static class ScoreReply
{
    /// <summary>A score as a bulk string whatever the protocol, as ZSCAN and the WITHSCORES of RESP2 give it.</summary>
    public static void AsBulk(RespWriter reply, double score)
    {
        Span<byte> text = stackalloc byte[40];
        int n = NumberFormat.FormatDouble(score, text);
        reply.Bulk(text[..n]);
    }
}
