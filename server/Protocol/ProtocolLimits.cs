namespace Diagnostics.Server.Protocol;

/// <summary>Request limits; the defaults are Redis's.</summary>
public sealed class ProtocolLimits
{
    /// <summary>Longest inline command or header line without a newline (PROTO_INLINE_MAX_SIZE).</summary>
    public const int InlineMaxBytes = 64 * 1024;

    /// <summary>
    /// Largest multibulk count accepted. Redis 7 allows up to INT_MAX and waits for the arguments;
    /// this server refuses more than 1024*1024*1024 at once, since that many arguments (4 bytes
    /// each at least) could never fit the default 1 GB query buffer anyway.
    /// </summary>
    public const long MaxMultibulkCount = 1024L * 1024 * 1024;

    /// <summary>Before AUTH, requests this large are refused (Redis's unauthenticated limits).</summary>
    public const long UnauthenticatedMaxMultibulk = 10;
    public const long UnauthenticatedMaxBulk = 16 * 1024;

    /// <summary>proto-max-bulk-len: largest single argument.</summary>
    public long ProtoMaxBulkLength { get; set; } = 512L * 1024 * 1024;

    /// <summary>client-query-buffer-limit: unparsed input a client may accumulate.</summary>
    public long ClientQueryBufferLimit { get; set; } = 1024L * 1024 * 1024;
}
