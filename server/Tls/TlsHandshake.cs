using System.Diagnostics;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using Diagnostics.Server.Diagnostics.Threads;
using Diagnostics.Server.Network;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Tls;

/// <summary>
/// The server side of one TLS handshake on an accepted socket, timed and counted by outcome;
/// what it yields is an ordinary <see cref="SocketClientTransport"/> over the TLS stream, so the
/// RESP code above does not know TLS is there.
/// </summary>
public static class TlsHandshake
{
    /// <summary>A client that does not finish its handshake in this time is dropped (it holds no client slot yet).</summary>
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(10);

    private const byte HandshakeRecord = 0x16;

    /// <summary>The transport once the handshake succeeded; null when it failed (the socket is then closed and the failure counted).</summary>
    public static async Task<SocketClientTransport?> AcceptAsync(Socket socket, TlsContext tls, int keepAliveSeconds,
        Diagnostics.Info.ServerStats stats, ILogger log, CancellationToken stopping)
    {
        var material = tls.Current;
        if (material is null)
        {
            socket.Dispose();
            return null;
        }
        SocketClientTransport.Prepared(socket, keepAliveSeconds);
        var remote = socket.RemoteEndPoint;
        var network = new HandshakeHopStream(new NetworkStream(socket, ownsSocket: true));
        string? rejected = null;
        var ssl = new SslStream(network, leaveInnerStreamOpen: false, (_, certificate, _, errors) =>
        {
            if (material.AcceptsClient(certificate, errors))
                return true;
            rejected = certificate is null ? "no client certificate" : $"client certificate {certificate.Subject}: {errors}";
            return false;
        });
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stopping);
        timeout.CancelAfter(Timeout);
        TlsHandshakeFailure? failure = null;
        string detail = "";
        long started = 0;
        try
        {
            // The first byte tells a plain-text client on the TLS port apart from a broken
            // handshake, and the time a handshake costs starts when the client begins it.
            var first = new byte[1];
            int peeked = await socket.ReceiveAsync(first, SocketFlags.Peek, timeout.Token).ConfigureAwait(false);
            if (peeked == 0)
                failure = TlsHandshakeFailure.Closed;
            else if (first[0] != HandshakeRecord)
                failure = TlsHandshakeFailure.Plaintext;
            else
            {
                // The crypto runs on pool threads (see HandshakeHopStream), from the first flight on.
                await ThreadPoolHop.FromSocketThread();
                started = Stopwatch.GetTimestamp();
                await ssl.AuthenticateAsServerAsync(material.ServerOptions, timeout.Token).ConfigureAwait(false);
                network.Hopping = false;
            }
        }
        catch (OperationCanceledException) when (!stopping.IsCancellationRequested)
        {
            failure = TlsHandshakeFailure.Timeout;
        }
        catch (OperationCanceledException)
        {
            ssl.Dispose();
            return null;
        }
        catch (AuthenticationException ex)
        {
            failure = rejected is not null ? TlsHandshakeFailure.ClientCertificate : TlsHandshakeFailure.Protocol;
            detail = rejected ?? Innermost(ex);
        }
        catch (Exception ex) when (ex is IOException or SocketException or ObjectDisposedException)
        {
            failure = TlsHandshakeFailure.Closed;
            detail = Innermost(ex);
        }
        if (failure is { } reason)
        {
            tls.Stats.Failed(reason);
            // Per connection and caused from outside: the counts are in INFO; the log has them at debug.
            log.LogDebug("TLS handshake with {Remote} failed: {Reason} {Detail}", remote, TlsStats.FailureNames[(int)reason], detail);
            ssl.Dispose();
            return null;
        }
        long micros = (long)Stopwatch.GetElapsedTime(started).TotalMicroseconds;
        tls.Stats.Completed(micros);
        var counters = ThreadCounters.Current;
        counters.TlsHandshakes++;
        counters.TlsHandshakeMicros += micros;
        var session = new TlsSession(tls.Stats, ssl.SslProtocol, ssl.NegotiatedCipherSuite.ToString(), ssl.RemoteCertificate?.Subject, micros);
        return new SocketClientTransport(socket, ssl, stats, session);
    }

    private static string Innermost(Exception ex)
    {
        while (ex.InnerException is not null)
            ex = ex.InnerException;
        return ex.Message;
    }
}
