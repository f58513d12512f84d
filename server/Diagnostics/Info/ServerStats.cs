namespace Diagnostics.Server.Diagnostics.Info;

/// <summary>Server-wide counters for INFO stats that are updated per connection, not per command.</summary>
public sealed class ServerStats
{
    private long _connectionsReceived;
    private long _rejectedConnections;
    private long _netInputBytes;
    private long _netOutputBytes;
    private long _protocolErrors;
    private long _queryBufferDisconnects;
    private long _outputBufferDisconnects;
    private long _httpAuthFailures;
    private long _httpAuthRateLimited;
    private long _authFailures;
    private long _aclDeniedCommands;
    private long _aclDeniedKeys;
    private long _aclDeniedChannels;

    public long StartedAtMs { get; } = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
    public long StartedTicks { get; } = Environment.TickCount64;

    public long ConnectionsReceived => Volatile.Read(ref _connectionsReceived);
    public long RejectedConnections => Volatile.Read(ref _rejectedConnections);
    public long NetInputBytes => Volatile.Read(ref _netInputBytes);
    public long NetOutputBytes => Volatile.Read(ref _netOutputBytes);
    public long ProtocolErrors => Volatile.Read(ref _protocolErrors);
    public long QueryBufferDisconnects => Volatile.Read(ref _queryBufferDisconnects);
    /// <summary>Clients closed for going over client-output-buffer-limit (client_output_buffer_limit_disconnections).</summary>
    public long OutputBufferLimitDisconnects => Volatile.Read(ref _outputBufferDisconnects);
    /// <summary>Wrong API keys, bearers and login-form secrets over HTTP (http_auth_failures).</summary>
    public long HttpAuthFailures => Volatile.Read(ref _httpAuthFailures);
    /// <summary>HTTP requests refused unseen because their address failed too often (http_auth_rate_limited).</summary>
    public long HttpAuthRateLimited => Volatile.Read(ref _httpAuthRateLimited);
    /// <summary>AUTH and HELLO AUTH over RESP that failed (acl_access_denied_auth, as Redis 7.2 names it).</summary>
    public long AuthFailures => Volatile.Read(ref _authFailures);
    /// <summary>Calls the ACL refused for their command, a key or a channel (acl_access_denied_cmd, _key, _channel, as Redis 7.2 names them); the studio's and API's refusals count as commands.</summary>
    public long AclDeniedCommands => Volatile.Read(ref _aclDeniedCommands);
    public long AclDeniedKeys => Volatile.Read(ref _aclDeniedKeys);
    public long AclDeniedChannels => Volatile.Read(ref _aclDeniedChannels);
    public long AclDenied => AclDeniedCommands + AclDeniedKeys + AclDeniedChannels;
    public long LastResetMs { get; private set; }

    public void ConnectionReceived() => Interlocked.Increment(ref _connectionsReceived);
    public void ConnectionRejected() => Interlocked.Increment(ref _rejectedConnections);
    public void NetInput(long bytes) => Interlocked.Add(ref _netInputBytes, bytes);
    public void NetOutput(long bytes) => Interlocked.Add(ref _netOutputBytes, bytes);
    public void ProtocolError() => Interlocked.Increment(ref _protocolErrors);
    public void QueryBufferDisconnect() => Interlocked.Increment(ref _queryBufferDisconnects);
    public void OutputBufferLimitDisconnect() => Interlocked.Increment(ref _outputBufferDisconnects);
    public void HttpAuthFailed() => Interlocked.Increment(ref _httpAuthFailures);
    public void HttpAuthRefusedForRate() => Interlocked.Increment(ref _httpAuthRateLimited);
    public void AuthFailed() => Interlocked.Increment(ref _authFailures);

    public void AclRefused(Acl.AclDenial reason)
    {
        switch (reason)
        {
            case Acl.AclDenial.Key:
                Interlocked.Increment(ref _aclDeniedKeys);
                break;
            case Acl.AclDenial.Channel:
                Interlocked.Increment(ref _aclDeniedChannels);
                break;
            case Acl.AclDenial.Command:
                Interlocked.Increment(ref _aclDeniedCommands);
                break;
        }
    }

    public void Reset()
    {
        Interlocked.Exchange(ref _connectionsReceived, 0);
        Interlocked.Exchange(ref _rejectedConnections, 0);
        Interlocked.Exchange(ref _netInputBytes, 0);
        Interlocked.Exchange(ref _netOutputBytes, 0);
        Interlocked.Exchange(ref _protocolErrors, 0);
        Interlocked.Exchange(ref _queryBufferDisconnects, 0);
        Interlocked.Exchange(ref _outputBufferDisconnects, 0);
        Interlocked.Exchange(ref _httpAuthFailures, 0);
        Interlocked.Exchange(ref _httpAuthRateLimited, 0);
        Interlocked.Exchange(ref _authFailures, 0);
        Interlocked.Exchange(ref _aclDeniedCommands, 0);
        Interlocked.Exchange(ref _aclDeniedKeys, 0);
        Interlocked.Exchange(ref _aclDeniedChannels, 0);
        LastResetMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
    }
}
