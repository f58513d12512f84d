using System.Net;
using System.Net.Http.Headers;
using System.Security.Cryptography.X509Certificates;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Tls;

/// <summary>
/// HTTPS for the studio, API and /metrics on http-tls-port, with the RESP certificate or its own,
/// reloaded when its files are replaced; and plain HTTP refused (or, for a browser's page, sent
/// to HTTPS) for clients beyond loopback, tried from a real second network namespace.
/// </summary>
public sealed class HttpsListenerTests : IDisposable
{
    private const string Key = "https-test-key-7c1d";
    private readonly TestCertificates _certificates = new();

    public void Dispose() => _certificates.Dispose();

    /// <summary>A GET over HTTPS trusting only the test CA: the status, the body and the certificate the server presented.</summary>
    private async Task<(HttpStatusCode Status, string Body, X509Certificate2 Certificate)> GetHttps(int port, string path, string? key = null)
    {
        X509Certificate2? presented = null;
        var options = _certificates.ClientOptions();
        // The test CA's chain policy decides; the callback only keeps what the server presented.
        options.RemoteCertificateValidationCallback = (_, certificate, _, errors) =>
        {
            presented = certificate is null ? null : X509CertificateLoader.LoadCertificate(certificate.GetRawCertData());
            return errors == System.Net.Security.SslPolicyErrors.None;
        };
        using var handler = new SocketsHttpHandler { SslOptions = options };
        using var http = new HttpClient(handler) { BaseAddress = new Uri($"https://localhost:{port}") };
        using var request = new HttpRequestMessage(HttpMethod.Get, path);
        if (key is not null)
            request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", key);
        using var response = await http.SendAsync(request);
        return (response.StatusCode, await response.Content.ReadAsStringAsync(), presented!);
    }

    [Fact]
    public async Task TheApiAndMetricsAnswerOverHttpsWithTheRespCertificateOrTheirOwn()
    {
        var resp = _certificates.Server("resp");
        int httpsPort = ServerProcess.FreePort();
        using (var server = ServerProcess.Start("--http-tls-port", httpsPort.ToString(), "--tls-cert-file", resp.CertFile, "--tls-key-file", resp.KeyFile))
        {
            var (status, body, certificate) = await GetHttps(httpsPort, "/api/info?section=server");
            Assert.Equal(HttpStatusCode.OK, status);
            Assert.Contains("redis_version", body);
            Assert.Equal(resp.SerialNumber, certificate.SerialNumber);
            (status, body, _) = await GetHttps(httpsPort, "/metrics");
            Assert.Contains("diagnostics_tls_certificate_expiry_seconds{listener=\"http\"", body);
            // No RESP TLS port: only the HTTPS listener uses the files, and needs no CA (no client certificates).
            using var c = server.Connect();
            Assert.Equal("0", InfoFields.Get(c, "tls", "tls_enabled"));
            Assert.Equal(resp.SerialNumber, InfoFields.Get(c, "tls", "http_tls_cert_serial"));
        }

        var web = _certificates.Server("web");
        int tlsPort = ServerProcess.FreePort();
        using (var server = ServerProcess.Start("--http-tls-port", httpsPort.ToString(), "--http-tls-cert-file", web.CertFile, "--http-tls-key-file", web.KeyFile,
            "--tls-port", tlsPort.ToString(), "--tls-cert-file", resp.CertFile, "--tls-key-file", resp.KeyFile, "--tls-auth-clients", "no"))
        {
            var (status, _, certificate) = await GetHttps(httpsPort, "/api/clients");
            Assert.Equal(HttpStatusCode.OK, status);
            Assert.Equal(web.SerialNumber, certificate.SerialNumber);
            using var tls = RespClient.ConnectTls(tlsPort, _certificates.ClientOptions());
            Assert.Equal(resp.SerialNumber, tls.Tls!.RemoteCertificate!.GetSerialNumberString());
        }
    }

    [Fact]
    public async Task TheHttpsCertificateIsReloadedWhenItsFilesAreReplaced()
    {
        var first = _certificates.Server("first");
        var (certFile, keyFile) = _certificates.Live(first, "web");
        int httpsPort = ServerProcess.FreePort();
        using var server = ServerProcess.Start("--http-tls-port", httpsPort.ToString(), "--http-tls-cert-file", certFile, "--http-tls-key-file", keyFile);
        Assert.Equal(first.SerialNumber, (await GetHttps(httpsPort, "/api/info")).Certificate.SerialNumber);

        var second = _certificates.Server("second");
        File.Copy(second.KeyFile, keyFile, overwrite: true);
        File.Copy(second.CertFile, certFile, overwrite: true);
        using var c = server.Connect();
        Poll.Until(() => InfoFields.Get(c, "tls", "http_tls_cert_serial") == second.SerialNumber, "the HTTPS listener takes the new pair", timeoutMs: 20_000);
        Assert.Equal(second.SerialNumber, (await GetHttps(httpsPort, "/api/info")).Certificate.SerialNumber);
        Poll.Until(() => server.Output.Contains("HTTP TLS certificate reloaded (certificate files changed): CN=second"), "the reload logged");
    }

    [Fact]
    public void PlainHttpBeyondLoopbackIsSentToHttpsOrRefused()
    {
        using var ns = NetworkNamespace.Create();
        var pair = _certificates.Server("server");
        int httpsPort = ServerProcess.FreePort();
        using var server = ServerProcess.Start("--http-bind", "127.0.0.1", ns.HostAddress, "--http-api-key", Key,
            "--http-tls-port", httpsPort.ToString(), "--tls-cert-file", pair.CertFile, "--tls-key-file", pair.KeyFile);
        string plain = $"http://{ns.HostAddress}:{server.HttpPort}";

        // A page is sent to the HTTPS listener, on the host the browser asked for; anything else is refused.
        var page = Curl(ns, "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}", $"{plain}/clients?sort=omem");
        Assert.Equal($"308 https://{ns.HostAddress}:{httpsPort}/clients?sort=omem", page);
        var post = Curl(ns, "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", $"Authorization: Bearer {Key}", $"{plain}/api/clients/1/kill");
        Assert.Equal("403", post);
        string refusal = Curl(ns, "-X", "POST", $"{plain}/api/clients/1/kill");
        Assert.Equal($"plain HTTP is served to loopback clients only: use https on port {httpsPort}", refusal.Trim());

        // Over HTTPS from the same address the key works (curl resolves the certificate's name to the host's address).
        string https = Curl(ns, "--cacert", _certificates.CaFile, "--resolve", $"localhost:{httpsPort}:{ns.HostAddress}",
            "-H", $"Authorization: Bearer {Key}", "-o", "/dev/null", "-w", "%{http_code}", $"https://localhost:{httpsPort}/api/info");
        Assert.Equal("200", https);

        // Loopback clients still use plain HTTP (the monitor's ingest among them).
        using var local = new ApiClient(server.HttpPort, Key);
        Assert.Contains("redis_connected_clients", local.GetText("/metrics"));
    }

    [Fact]
    public void HttpAllowPlaintextServesPlainHttpBeyondLoopbackBehindAProxy()
    {
        using var ns = NetworkNamespace.Create();
        using var server = ServerProcess.Start("--http-bind", "127.0.0.1", ns.HostAddress, "--http-api-key", Key);
        string plain = $"http://{ns.HostAddress}:{server.HttpPort}/api/info";
        Assert.Equal("403", Curl(ns, "-o", "/dev/null", "-w", "%{http_code}", "-H", $"Authorization: Bearer {Key}", plain));
        Assert.Contains("set http-tls-port (HTTPS), or http-allow-plaintext yes", Curl(ns, plain));

        using (var c = server.Connect())
            RespAssert.Ok(c.Call("CONFIG", "SET", "http-allow-plaintext", "yes"));
        Assert.Equal("200", Curl(ns, "-o", "/dev/null", "-w", "%{http_code}", "-H", $"Authorization: Bearer {Key}", plain));
        // The key is still required.
        Assert.Equal("401", Curl(ns, "-o", "/dev/null", "-w", "%{http_code}", plain));
    }

    private static string Curl(NetworkNamespace ns, params string[] arguments)
    {
        var result = ns.Run("curl", "curl", ["-s", "--max-time", "10", .. arguments]);
        Assert.True(result.ExitCode == 0, $"curl {string.Join(' ', arguments)} exited {result.ExitCode}: {result.StandardError}");
        return result.StandardOutput;
    }
}
