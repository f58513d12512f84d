namespace Diagnostics.Server.Diagnostics;

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
    public long LastResetMs { get; private set; }

    public void ConnectionReceived() => Interlocked.Increment(ref _connectionsReceived);
    public void ConnectionRejected() => Interlocked.Increment(ref _rejectedConnections);
    public void NetInput(long bytes) => Interlocked.Add(ref _netInputBytes, bytes);
    public void NetOutput(long bytes) => Interlocked.Add(ref _netOutputBytes, bytes);
    public void ProtocolError() => Interlocked.Increment(ref _protocolErrors);
    public void QueryBufferDisconnect() => Interlocked.Increment(ref _queryBufferDisconnects);
    public void OutputBufferLimitDisconnect() => Interlocked.Increment(ref _outputBufferDisconnects);

    public void Reset()
    {
        Interlocked.Exchange(ref _connectionsReceived, 0);
        Interlocked.Exchange(ref _rejectedConnections, 0);
        Interlocked.Exchange(ref _netInputBytes, 0);
        Interlocked.Exchange(ref _netOutputBytes, 0);
        Interlocked.Exchange(ref _protocolErrors, 0);
        Interlocked.Exchange(ref _queryBufferDisconnects, 0);
        Interlocked.Exchange(ref _outputBufferDisconnects, 0);
        LastResetMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
    }
}
