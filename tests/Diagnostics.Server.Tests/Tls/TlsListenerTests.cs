using System.Security.Authentication;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Tls;

/// <summary>
/// RESP over TLS on tls-port, configured as Redis configures it, driven by the real redis-cli and
/// redis-benchmark (Debian's are built with TLS) and by .NET's own TLS client: client
/// certificates as tls-auth-clients says, a plain-text client on the TLS port, the protocols
/// allowed, and the handshake counts INFO tls reports for each outcome.
/// </summary>
public sealed class TlsListenerTests : IDisposable
{
    private readonly TestCertificates _certificates = new();

    public void Dispose() => _certificates.Dispose();

    private (ServerProcess Server, int TlsPort) StartTls(TestCertificates.Pair pair, params string[] extra)
    {
        int tlsPort = ServerProcess.FreePort();
        var server = ServerProcess.Start([
            "--tls-port", tlsPort.ToString(), "--tls-cert-file", pair.CertFile, "--tls-key-file", pair.KeyFile,
            "--tls-ca-cert-file", _certificates.CaFile, .. extra]);
        return (server, tlsPort);
    }

    private string[] CliTls(int port, TestCertificates.Pair? client, params string[] command)
    {
        string[] tls = client is null
            ? ["--tls", "--cacert", _certificates.CaFile]
            : ["--tls", "--cacert", _certificates.CaFile, "--cert", client.CertFile, "--key", client.KeyFile];
        return ["-p", port.ToString(), .. tls, .. command];
    }

    [Fact]
    public void RedisCliWithAClientCertificateReadsAndWritesOverTls()
    {
        var pair = _certificates.Server("server");
        var client = _certificates.Client("client");
        var (server, tlsPort) = StartTls(pair);
        using var _ = server;

        var set = ExternalTool.Run("redis-cli", "redis-tools", CliTls(tlsPort, client, "SET", "greeting", "hello over tls"));
        Assert.True(set.ExitCode == 0 && set.StandardOutput.Trim() == "OK", $"redis-cli --tls SET: {set.ExitCode} {set.StandardOutput}{set.StandardError}");
        var get = ExternalTool.Run("redis-cli", "redis-tools", CliTls(tlsPort, client, "GET", "greeting"));
        Assert.Equal("hello over tls", get.StandardOutput.Trim());

        // The same keyspace as the plain port, and the handshakes counted.
        using var plain = server.Connect();
        RespAssert.Bulk("hello over tls", plain.Call("GET", "greeting"));
        var info = InfoFields.Read(plain, "tls");
        Assert.Equal("1", info["tls_enabled"]);
        Assert.Equal(tlsPort.ToString(), info["tls_port"]);
        Assert.Equal("CN=server", info["tls_cert_subject"]);
        Assert.Equal(pair.SerialNumber, info["tls_cert_serial"]);
        Assert.Equal("TLSv1.2 TLSv1.3", info["tls_protocols"]);
        Assert.InRange(long.Parse(info["tls_cert_expires_in_days"]), 88, 90);
        Assert.Equal("2", info["tls_handshakes"]);
        Assert.Equal("0", info["tls_handshake_failures"]);
        Assert.True(long.Parse(info["tls_handshake_usec"]) > 0, "the handshakes' time is counted");

        // A TLS client is an ordinary client once connected; this server's TLS figures for it are in INFO.
        using var tlsClient = RespClient.ConnectTls(tlsPort, _certificates.ClientOptions(client));
        RespAssert.Bulk("hello over tls", tlsClient.Call("GET", "greeting"));
        Assert.Equal("1", InfoFields.Get(plain, "tls", "tls_connected_clients"));
    }

    [Fact]
    public void ClientCertificatesAreRequiredOptionalOrNotAsTlsAuthClientsSays()
    {
        var (server, tlsPort) = StartTls(_certificates.Server("server"));
        using var _ = server;
        using var plain = server.Connect();
        var stranger = _certificates.Stranger("stranger");

        // yes (Redis's default): no certificate, or one the CA did not sign, is refused at the handshake.
        var none = ExternalTool.Run("redis-cli", "redis-tools", CliTls(tlsPort, null, "PING"));
        Assert.DoesNotContain("PONG", none.StandardOutput);
        var foreign = ExternalTool.Run("redis-cli", "redis-tools", CliTls(tlsPort, stranger, "PING"));
        Assert.DoesNotContain("PONG", foreign.StandardOutput);
        Poll.Until(() => InfoFields.GetInt64(plain, "tls", "tls_handshake_failures_client_certificate") == 2,
            () => "two refused client certificates: " + InfoFields.Get(plain, "tls", "tls_handshake_failures_client_certificate"));

        // optional: no certificate is fine, a foreign one still is not.
        RespAssert.Ok(plain.Call("CONFIG", "SET", "tls-auth-clients", "optional"));
        Assert.Equal("PONG", ExternalTool.Run("redis-cli", "redis-tools", CliTls(tlsPort, null, "PING")).StandardOutput.Trim());
        Assert.DoesNotContain("PONG", ExternalTool.Run("redis-cli", "redis-tools", CliTls(tlsPort, stranger, "PING")).StandardOutput);

        // no: the server asks for none.
        RespAssert.Ok(plain.Call("CONFIG", "SET", "tls-auth-clients", "no"));
        Assert.Equal("PONG", ExternalTool.Run("redis-cli", "redis-tools", CliTls(tlsPort, null, "PING")).StandardOutput.Trim());
        RespAssert.BulkArray(plain.Call("CONFIG", "GET", "tls-auth-clients"), "tls-auth-clients", "no");
        Assert.Equal("3", InfoFields.Get(plain, "tls", "tls_handshake_failures_client_certificate"));
    }

    [Fact]
    public void APlainTextClientOnTheTlsPortIsClosedAndCountedAndOthersCarryOn()
    {
        var client = _certificates.Client("client");
        var (server, tlsPort) = StartTls(_certificates.Server("server"));
        using var _ = server;
        using var tlsClient = RespClient.ConnectTls(tlsPort, _certificates.ClientOptions(client));
        RespAssert.Ok(tlsClient.Call("SET", "k", "v"));

        using (var confused = new RespClient(tlsPort))
        {
            confused.Send("PING");
            Assert.True(confused.IsClosedByServer(), "a plain RESP client on the TLS port is closed");
        }
        using var plain = server.Connect();
        Assert.Equal("1", InfoFields.Get(plain, "tls", "tls_handshake_failures_plaintext"));
        RespAssert.Bulk("v", tlsClient.Call("GET", "k"));
        // A TLS client on the plain port fails its own handshake; the server just sees garbage and carries on.
        Assert.ThrowsAny<Exception>(() => RespClient.ConnectTls(server.Port, _certificates.ClientOptions(client)).Dispose());
        Assert.Equal("PONG", plain.Call("PING").Text);
    }

    [Fact]
    public void TlsProtocolsLimitsTheVersionsAndRefusesWhatRedisRefuses()
    {
        var client = _certificates.Client("client");
        var (server, tlsPort) = StartTls(_certificates.Server("server"), "--tls-protocols", "TLSv1.3");
        using var _ = server;
        using var plain = server.Connect();

        using (var tls13 = RespClient.ConnectTls(tlsPort, _certificates.ClientOptions(client, SslProtocols.Tls13)))
        {
            Assert.Equal("PONG", tls13.Call("PING").Text);
            Assert.Equal(SslProtocols.Tls13, tls13.Tls!.SslProtocol);
        }
        Assert.ThrowsAny<Exception>(() => RespClient.ConnectTls(tlsPort, _certificates.ClientOptions(client, SslProtocols.Tls12)).Call("PING"));
        Poll.Until(() => InfoFields.GetInt64(plain, "tls", "tls_handshake_failures_protocol") == 1,
            () => "a TLS 1.2 client counted as a protocol failure: " + InfoFields.Get(plain, "tls", "tls_handshake_failures_protocol"));

        // Redis's own refusal for a protocol it does not know, and the setting is left as it was.
        var redisPair = _certificates.Server("redis");
        using var redis = RealRedisServer.Start("--tls-port", ServerProcess.FreePort().ToString(), "--tls-cert-file", redisPair.CertFile,
            "--tls-key-file", redisPair.KeyFile, "--tls-ca-cert-file", _certificates.CaFile, "--tls-protocols", "TLSv1.3");
        using var theirs = redis.Connect();
        foreach (var c in new[] { plain, theirs })
        {
            RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'tls-protocols') - Unable to update TLS configuration. Check server logs.",
                c.Call("CONFIG", "SET", "tls-protocols", "TLSv1.4"));
            RespAssert.BulkArray(c.Call("CONFIG", "GET", "tls-protocols"), "tls-protocols", "TLSv1.3");
        }
    }

    [Fact]
    public void TlsPortMovesAtRunTimeAndTheOldPortCloses()
    {
        var client = _certificates.Client("client");
        var (server, tlsPort) = StartTls(_certificates.Server("server"));
        using var _ = server;
        using var plain = server.Connect();
        using var before = RespClient.ConnectTls(tlsPort, _certificates.ClientOptions(client));

        int moved = ServerProcess.FreePort();
        RespAssert.Ok(plain.Call("CONFIG", "SET", "tls-port", moved.ToString()));
        using (var after = RespClient.ConnectTls(moved, _certificates.ClientOptions(client)))
            Assert.Equal("PONG", after.Call("PING").Text);
        Assert.ThrowsAny<System.Net.Sockets.SocketException>(() => new RespClient(tlsPort).Dispose());
        // A connection made before the move carries on.
        Assert.Equal("PONG", before.Call("PING").Text);
        Assert.Equal(moved.ToString(), InfoFields.Get(plain, "tls", "tls_port"));

        // A port another socket holds is refused in Redis's words, and the listener stays where it was.
        using var holder = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        holder.Start();
        int taken = ((System.Net.IPEndPoint)holder.LocalEndpoint).Port;
        RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'tls-port') - Unable to listen on this port. Check server logs.",
            plain.Call("CONFIG", "SET", "tls-port", taken.ToString()));
        using (var still = RespClient.ConnectTls(moved, _certificates.ClientOptions(client)))
            Assert.Equal("PONG", still.Call("PING").Text);
        RespAssert.BulkArray(plain.Call("CONFIG", "GET", "tls-port"), "tls-port", moved.ToString());
    }

    [Fact]
    public void RedisBenchmarkRunsOverTls()
    {
        var client = _certificates.Client("client");
        var (server, tlsPort) = StartTls(_certificates.Server("server"));
        using var _ = server;
        var result = ExternalTool.Run("redis-benchmark", "redis-tools",
            ["-p", tlsPort.ToString(), "--tls", "--cacert", _certificates.CaFile, "--cert", client.CertFile, "--key", client.KeyFile,
             "-t", "set,get", "-n", "2000", "-c", "4", "-q"]);
        Assert.True(result.ExitCode == 0, $"redis-benchmark --tls exited {result.ExitCode}: {result.StandardOutput}{result.StandardError}");
        Assert.Contains("SET:", result.StandardOutput);
        Assert.Contains("GET:", result.StandardOutput);
        using var plain = server.Connect();
        Assert.Equal("0", InfoFields.Get(plain, "tls", "tls_handshake_failures"));
        Assert.Equal("2000", InfoFields.Read(plain, "commandstats")["cmdstat_set"].Split(',')[0].Split('=')[1]);
    }

    [Fact]
    public void AnEncryptedKeyIsReadWithTlsKeyFilePass()
    {
        var pair = _certificates.Server("locked", keyPassword: "key-Pa55");
        var client = _certificates.Client("client");
        var (server, tlsPort) = StartTls(pair, "--tls-key-file-pass", "key-Pa55");
        using var _ = server;
        using var tls = RespClient.ConnectTls(tlsPort, _certificates.ClientOptions(client));
        Assert.Equal(pair.SerialNumber, tls.Tls!.RemoteCertificate!.GetSerialNumberString());
        Assert.DoesNotContain("key-Pa55", server.Output);

        var (exitCode, output) = ServerProcess.RunUntilExit("--tls-port", ServerProcess.FreePort().ToString(), "--tls-cert-file", pair.CertFile,
            "--tls-key-file", pair.KeyFile, "--tls-ca-cert-file", _certificates.CaFile, "--tls-key-file-pass", "wrong-Pa55");
        Assert.Equal(1, exitCode);
        Assert.Contains("Failed to configure TLS. Check logs for more info.", output);
        Assert.Contains(pair.KeyFile, output);
        Assert.DoesNotContain("wrong-Pa55", output);
    }

    [Fact]
    public async Task ADebugPackageOfATlsServerHasItsFiguresAndNoKeyMaterial()
    {
        const string password = "package-key-Pa55";
        var pair = _certificates.Server("packaged", keyPassword: password);
        var client = _certificates.Client("client");
        var (server, tlsPort) = StartTls(pair, "--tls-key-file-pass", password);
        using var _ = server;
        using (var tls = RespClient.ConnectTls(tlsPort, _certificates.ClientOptions(client)))
            RespAssert.Ok(tls.Call("SET", "k", "v"));

        using var api = new ApiClient(server.HttpPort);
        // The thread that completed the handshake has it in its counters.
        var threads = api.Get("/api/threads", global::Diagnostics.Contracts.ContractsJson.Default.ThreadSnapshotArray);
        Assert.Equal(1, threads.Sum(t => t.TlsHandshakes));
        Assert.True(threads.Single(t => t.TlsHandshakes > 0).TlsHandshakeMicros > 0);

        byte[] zipBytes = await api.Http.GetByteArrayAsync("/api/debug/package");
        using var zip = new System.IO.Compression.ZipArchive(new MemoryStream(zipBytes));
        string keyBody = File.ReadAllLines(pair.KeyFile)[1];
        bool sawTls = false;
        foreach (var entry in zip.Entries)
        {
            using var reader = new StreamReader(entry.Open());
            string text = reader.ReadToEnd();
            Assert.DoesNotContain("PRIVATE KEY", text);
            Assert.DoesNotContain(keyBody, text);
            Assert.DoesNotContain(password, text);
            sawTls |= text.Contains("tls_handshakes:1", StringComparison.Ordinal);
        }
        Assert.True(sawTls, "the package's INFO has the tls section");
    }

    [Fact]
    public void MissingOrExpiredCertificatesStopTheStartWithTheReason()
    {
        var expired = _certificates.Expired("expired");
        int tlsPort = ServerProcess.FreePort();
        var (exitCode, output) = ServerProcess.RunUntilExit("--tls-port", tlsPort.ToString(), "--tls-cert-file", expired.CertFile,
            "--tls-key-file", expired.KeyFile, "--tls-ca-cert-file", _certificates.CaFile);
        Assert.Equal(1, exitCode);
        Assert.Contains("expired on", output);
        Assert.Contains("Failed to configure TLS. Check logs for more info.", output);

        // Redis's own reasons for settings that cannot work.
        (exitCode, output) = ServerProcess.RunUntilExit("--tls-port", tlsPort.ToString(), "--tls-key-file", expired.KeyFile);
        Assert.Equal(1, exitCode);
        Assert.Contains("No tls-cert-file configured!", output);
        var pair = _certificates.Server("server");
        (exitCode, output) = ServerProcess.RunUntilExit("--tls-port", tlsPort.ToString(), "--tls-cert-file", pair.CertFile, "--tls-key-file", pair.KeyFile);
        Assert.Equal(1, exitCode);
        Assert.Contains("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!", output);
        // Without client certificates no CA is needed, as in Redis.
        using var server = ServerProcess.Start("--tls-port", tlsPort.ToString(), "--tls-cert-file", pair.CertFile, "--tls-key-file", pair.KeyFile, "--tls-auth-clients", "no");
        using var tls = RespClient.ConnectTls(tlsPort, _certificates.ClientOptions());
        Assert.Equal("PONG", tls.Call("PING").Text);
    }
}
