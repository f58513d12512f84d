namespace Diagnostics.Server.Tls;

/// <summary>Why a TLS handshake did not complete: the reasons INFO, /metrics and the history count apart.</summary>
public enum TlsHandshakeFailure
{
    /// <summary>The first bytes were not a TLS record: a plain-text client on the TLS port.</summary>
    Plaintext,
    /// <summary>The handshake did not finish within the time allowed.</summary>
    Timeout,
    /// <summary>The peer closed the connection (or refused our certificate and hung up).</summary>
    Closed,
    /// <summary>The client presented no certificate, or one the CA did not sign, while tls-auth-clients wants one.</summary>
    ClientCertificate,
    /// <summary>No protocol version or cipher both sides accept, or a malformed handshake.</summary>
    Protocol,
}

/// <summary>
/// Handshake counts and times for the whole server. Handshakes happen once per connection, so
/// plain interlocked counters cost nothing that matters; each thread's share is in its
/// <see cref="Diagnostics.Threads.ThreadCounters"/> row.
/// </summary>
public sealed class TlsStats
{
    public static readonly string[] FailureNames = ["plaintext", "timeout", "closed", "client_certificate", "protocol"];

    private long _handshakes;
    private long _handshakeMicros;
    private long _maxHandshakeMicros;
    private readonly long[] _failures = new long[FailureNames.Length];
    private long _connected;

    public long Handshakes => Volatile.Read(ref _handshakes);
    /// <summary>Microseconds spent in completed handshakes, from the client's first byte to the handshake's end.</summary>
    public long HandshakeMicros => Volatile.Read(ref _handshakeMicros);
    public long Failures(TlsHandshakeFailure reason) => Volatile.Read(ref _failures[(int)reason]);
    /// <summary>TLS clients connected now.</summary>
    public long Connected => Volatile.Read(ref _connected);

    public long TotalFailures
    {
        get
        {
            long total = 0;
            for (int i = 0; i < _failures.Length; i++)
                total += Volatile.Read(ref _failures[i]);
            return total;
        }
    }

    /// <summary>The slowest handshake since the last call (the history's per-second peak), then starts over.</summary>
    public long TakeMaxHandshakeMicros() => Interlocked.Exchange(ref _maxHandshakeMicros, 0);

    public void Completed(long micros)
    {
        Interlocked.Increment(ref _handshakes);
        Interlocked.Add(ref _handshakeMicros, micros);
        long seen = Volatile.Read(ref _maxHandshakeMicros);
        while (micros > seen)
        {
            long was = Interlocked.CompareExchange(ref _maxHandshakeMicros, micros, seen);
            if (was == seen)
                break;
            seen = was;
        }
        Interlocked.Increment(ref _connected);
    }

    public void Disconnected() => Interlocked.Decrement(ref _connected);

    public void Failed(TlsHandshakeFailure reason) => Interlocked.Increment(ref _failures[(int)reason]);

    /// <summary>CONFIG RESETSTAT: the counts start over; connected clients stay counted.</summary>
    public void Reset()
    {
        Interlocked.Exchange(ref _handshakes, 0);
        Interlocked.Exchange(ref _handshakeMicros, 0);
        Interlocked.Exchange(ref _maxHandshakeMicros, 0);
        for (int i = 0; i < _failures.Length; i++)
            Interlocked.Exchange(ref _failures[i], 0);
    }
}
