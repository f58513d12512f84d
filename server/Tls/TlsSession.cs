using System.Security.Authentication;

namespace Diagnostics.Server.Tls;

/// <summary>What one client's TLS handshake agreed on: shown in the client views, counted while it lasts.</summary>
public sealed class TlsSession(TlsStats stats, SslProtocols protocol, string cipher, string? clientCertificate, long handshakeMicros)
{
    private int _ended;

    public string Protocol { get; } = TlsProtocols.Format(protocol);
    public string Cipher { get; } = cipher;
    /// <summary>The subject of the certificate the client presented, or null.</summary>
    public string? ClientCertificate { get; } = clientCertificate;
    public long HandshakeMicros { get; } = handshakeMicros;

    /// <summary>The connection closed: no longer one of the TLS clients connected (once, however often called).</summary>
    public void Ended()
    {
        if (Interlocked.Exchange(ref _ended, 1) == 0)
            stats.Disconnected();
    }
}
