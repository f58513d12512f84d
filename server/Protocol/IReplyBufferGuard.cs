namespace Diagnostics.Server.Protocol;

/// <summary>
/// Watches a connection's unsent replies as they are produced. <see cref="RespWriter"/> asks it each
/// time it needs a new block of output (every 4 KB or so, never per reply), so the check costs
/// nothing on the per-reply path yet sees a single huge reply grow.
/// </summary>
public interface IReplyBufferGuard
{
    /// <summary>False when the client is over its output buffer limits: the writer stops buffering.</summary>
    bool MayBuffer(RespWriter writer);
}
