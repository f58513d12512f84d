using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Tls;

/// <summary>
/// Certificate hot reload: files replaced on disk (as renewal tools replace them) or a CONFIG SET
/// take effect for new connections while the connections already up carry on, under load and
/// with no failed request; a certificate that cannot be used is refused with the reason in the
/// log and INFO, and the one in use stays. CONFIG SET answers as redis-server does.
/// </summary>
public sealed class TlsReloadTests : IDisposable
{
    private readonly TestCertificates _certificates = new();

    public void Dispose() => _certificates.Dispose();

    [Fact]
    public async Task ReplacedCertificateFilesTakeEffectUnderLoadWithNoFailedRequest()
    {
        var first = _certificates.Server("first");
        var (certFile, keyFile) = _certificates.Live(first);
        var (server, tlsPort) = StartTls(certFile, keyFile);
        using var _ = server;
        var options = _certificates.ClientOptions();

        // Load: long-lived clients counting in their own keys, and clients that connect, write, read and leave.
        using var stop = new CancellationTokenSource();
        var failures = new System.Collections.Concurrent.ConcurrentQueue<string>();
        var servedSerials = new System.Collections.Concurrent.ConcurrentDictionary<string, int>();
        long requests = 0;
        var longLived = Enumerable.Range(0, 3).Select(i => Task.Run(() =>
        {
            using var client = RespClient.ConnectTls(tlsPort, options);
            long expected = 0;
            while (!stop.IsCancellationRequested)
            {
                var reply = client.Call("INCR", $"counter:{i}");
                Interlocked.Increment(ref requests);
                if (reply.Integer != ++expected)
                    failures.Enqueue($"long-lived client {i}: INCR answered {reply}, expected {expected}");
            }
            return expected;
        })).ToArray();
        var shortLived = Enumerable.Range(0, 2).Select(i => Task.Run(() =>
        {
            int round = 0;
            while (!stop.IsCancellationRequested)
            {
                try
                {
                    using var client = RespClient.ConnectTls(tlsPort, options);
                    servedSerials.AddOrUpdate(client.Tls!.RemoteCertificate!.GetSerialNumberString(), 1, (_, n) => n + 1);
                    string value = $"{i}-{round++}";
                    var set = client.Call("SET", $"short:{i}", value);
                    var get = client.Call("GET", $"short:{i}");
                    Interlocked.Add(ref requests, 2);
                    if (set.Text != "OK" || get.Text != value)
                        failures.Enqueue($"short-lived client {i}: SET {set}, GET {get}");
                }
                catch (Exception ex)
                {
                    failures.Enqueue($"short-lived client {i}: {ex.GetType().Name}: {ex.Message}");
                }
            }
        })).ToArray();

        Poll.Until(() => Interlocked.Read(ref requests) > 500, "the load runs");
        // As certbot or a Kubernetes secret update: each file replaced whole by a rename, one after the other.
        var second = _certificates.Server("second");
        _certificates.Replace(second.CertFile, certFile);
        _certificates.Replace(second.KeyFile, keyFile);
        Poll.Until(() => servedSerials.ContainsKey(second.SerialNumber), "new connections get the new certificate", timeoutMs: 20_000);
        long atSwap = Interlocked.Read(ref requests);
        Poll.Until(() => Interlocked.Read(ref requests) > atSwap + 500, "the load goes on after the reload");
        stop.Cancel();
        long[] counts = await Task.WhenAll(longLived).WaitAsync(TimeSpan.FromSeconds(30));
        await Task.WhenAll(shortLived).WaitAsync(TimeSpan.FromSeconds(30));

        Assert.True(failures.IsEmpty, string.Join("\n", failures.Take(10)));
        using var plain = server.Connect();
        for (int i = 0; i < counts.Length; i++)
        {
            Assert.True(counts[i] > 0, $"long-lived client {i} made requests");
            RespAssert.Bulk(counts[i].ToString(), plain.Call("GET", $"counter:{i}"));
        }
        var info = InfoFields.Read(plain, "tls");
        Assert.Equal(second.SerialNumber, info["tls_cert_serial"]);
        Assert.Equal("1", info["tls_reloads"]);
        Assert.Equal("0", info["tls_reload_failures"]);
        Assert.Equal("0", info["tls_handshake_failures"]);
        Poll.Until(() => server.Output.Contains("TLS certificate reloaded (certificate files changed): CN=second"), "the reload logged");
    }

    [Fact]
    public void ABrokenOrExpiredReplacementIsRefusedAndTheCertificateInUseStays()
    {
        var first = _certificates.Server("first");
        var (certFile, keyFile) = _certificates.Live(first);
        var (server, tlsPort) = StartTls(certFile, keyFile);
        using var _ = server;
        using var plain = server.Connect();
        using var before = RespClient.ConnectTls(tlsPort, _certificates.ClientOptions());

        // A certificate file that is not one.
        _certificates.Replace(_certificates.Write("not a certificate\n"), certFile);
        Poll.Until(() => InfoFields.GetInt64(plain, "tls", "tls_reload_failures") == 1, "the broken file is refused", timeoutMs: 20_000);
        AssertServes(tlsPort, first.SerialNumber);
        // The log line is read from the server's output as it comes, a moment after INFO counts it.
        Poll.Until(() => server.Output.Contains("Still using the certificate loaded at"), "the refusal logged with the certificate kept");
        Assert.Contains(certFile, InfoFields.Get(plain, "tls", "tls_last_reload_error"));

        // An expired certificate with its own key.
        var expired = _certificates.Expired("expired");
        _certificates.Replace(expired.KeyFile, keyFile);
        _certificates.Replace(expired.CertFile, certFile);
        Poll.Until(() => InfoFields.GetInt64(plain, "tls", "tls_reload_failures") == 2, "the expired certificate is refused", timeoutMs: 20_000);
        Assert.Contains("expired on", InfoFields.Get(plain, "tls", "tls_last_reload_error"));
        AssertServes(tlsPort, first.SerialNumber);
        Assert.Equal("PONG", before.Call("PING").Text);

        // A good pair after them is taken, and the error is cleared.
        var renewed = _certificates.Server("renewed");
        _certificates.Replace(renewed.KeyFile, keyFile);
        _certificates.Replace(renewed.CertFile, certFile);
        Poll.Until(() => InfoFields.Get(plain, "tls", "tls_cert_serial") == renewed.SerialNumber, "the renewed certificate is taken", timeoutMs: 20_000);
        AssertServes(tlsPort, renewed.SerialNumber);
        Assert.Equal("", InfoFields.Get(plain, "tls", "tls_last_reload_error"));
        // No key material, ever, in the log.
        Assert.DoesNotContain("PRIVATE KEY", server.Output);
    }

    [Fact]
    public void ConfigSetOfACertificateAndItsKeyIsOneChangeAndAnswersAsRedis()
    {
        var first = _certificates.Server("first");
        var second = _certificates.Server("second");
        var other = _certificates.Server("other");
        int tlsPort = ServerProcess.FreePort();
        using var server = ServerProcess.Start("--tls-port", tlsPort.ToString(), "--tls-cert-file", first.CertFile, "--tls-key-file", first.KeyFile,
            "--tls-auth-clients", "no");
        using var redis = RealRedisServer.Start("--tls-port", ServerProcess.FreePort().ToString(), "--tls-cert-file", first.CertFile,
            "--tls-key-file", first.KeyFile, "--tls-auth-clients", "no");
        using var ours = server.Connect();
        using var theirs = redis.Connect();
        foreach (var c in new[] { ours, theirs })
        {
            // Both files in one CONFIG SET: applied together.
            RespAssert.Ok(c.Call("CONFIG", "SET", "tls-cert-file", second.CertFile, "tls-key-file", second.KeyFile));
            // A key that is not the certificate's: refused, and both settings as they were.
            RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'tls-key-file') - Unable to update TLS configuration. Check server logs.",
                c.Call("CONFIG", "SET", "tls-key-file", other.KeyFile));
            RespAssert.BulkArray(c.Call("CONFIG", "GET", "tls-key-file"), "tls-key-file", second.KeyFile);
            RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to update TLS configuration. Check server logs.",
                c.Call("CONFIG", "SET", "maxmemory-samples", "7", "tls-cert-file", "/no/such/file.crt"));
            RespAssert.BulkArray(c.Call("CONFIG", "GET", "maxmemory-samples"), "maxmemory-samples", "5");
            RespAssert.BulkArray(c.Call("CONFIG", "GET", "tls-cert-file"), "tls-cert-file", second.CertFile);
        }
        AssertServes(tlsPort, second.SerialNumber);
        Poll.Until(() => server.Output.Contains("TLS configuration refused (CONFIG SET)"), "the refusal logged");
        Assert.Equal("1", InfoFields.Get(ours, "tls", "tls_reloads"));
        Assert.Equal("2", InfoFields.Get(ours, "tls", "tls_reload_failures"));
    }

    [Fact]
    public void TlsSettingsWhileNoTlsIsInUseAreAcceptedAsRedisAcceptsThem()
    {
        using var server = ServerProcess.Start();
        using var redis = RealRedisServer.Start();
        using var ours = server.Connect();
        using var theirs = redis.Connect();
        foreach (var c in new[] { ours, theirs })
        {
            // Nothing uses TLS, so nothing is loaded: Redis checks the files only once they are used.
            RespAssert.Ok(c.Call("CONFIG", "SET", "tls-cert-file", "/no/such/file.crt", "tls-protocols", "TLSv1.2"));
            RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'tls-port') - Unable to update TLS configuration. Check server logs.",
                c.Call("CONFIG", "SET", "tls-port", ServerProcess.FreePort().ToString()));
            RespAssert.BulkArray(c.Call("CONFIG", "GET", "tls-port"), "tls-port", "0");
            RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'tls-auth-clients') - argument(s) must be one of the following: no, yes, optional",
                c.Call("CONFIG", "SET", "tls-auth-clients", "maybe"));
            RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'tls-session-cache-size') - argument must be between 0 and 2147483647 inclusive",
                c.Call("CONFIG", "SET", "tls-session-cache-size", "-1"));
        }
        var ourNames = ours.Call("CONFIG", "GET", "tls-*").Array.Where((_, i) => i % 2 == 0).Select(v => v.Text).Order();
        var theirNames = theirs.Call("CONFIG", "GET", "tls-*").Array.Where((_, i) => i % 2 == 0).Select(v => v.Text).Order();
        Assert.Equal(theirNames, ourNames);
    }

    /// <summary>A server on a TLS port with this pair and no client certificates asked for.</summary>
    private static (ServerProcess Server, int TlsPort) StartTls(string certFile, string keyFile)
    {
        int tlsPort = ServerProcess.FreePort();
        return (ServerProcess.Start("--tls-port", tlsPort.ToString(), "--tls-cert-file", certFile, "--tls-key-file", keyFile, "--tls-auth-clients", "no"), tlsPort);
    }

    private void AssertServes(int tlsPort, string serial)
    {
        using var client = RespClient.ConnectTls(tlsPort, _certificates.ClientOptions());
        Assert.Equal(serial, client.Tls!.RemoteCertificate!.GetSerialNumberString());
        Assert.Equal("PONG", client.Call("PING").Text);
    }
}
