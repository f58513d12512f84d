using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Replication;

/// <summary>
/// tls-replication with real redis-server peers on either side: a redis-server replica of this
/// server's TLS port, and this server replicating a redis-server master over TLS, each presenting
/// a client certificate the other's CA signed; a master whose certificate the replica's CA did not
/// sign is never followed, and the log says why.
/// </summary>
public sealed class TlsReplicationTests : IDisposable
{
    private readonly TestCertificates _certificates = new();

    public void Dispose() => _certificates.Dispose();

    private string[] TlsFiles(TestCertificates.Pair pair) =>
        ["--tls-cert-file", pair.CertFile, "--tls-key-file", pair.KeyFile, "--tls-ca-cert-file", _certificates.CaFile];

    [Fact]
    public void ARedisServerReplicaFollowsThisServerOverTls()
    {
        int masterTls = ServerProcess.FreePort();
        using var master = ServerProcess.Start(["--tls-port", masterTls.ToString(), .. TlsFiles(_certificates.Server("master"))]);
        int replicaTls = ServerProcess.FreePort();
        using var replica = RealRedisServer.Start(["--tls-port", replicaTls.ToString(), "--tls-replication", "yes", .. TlsFiles(_certificates.Server("replica"))]);
        using var m = master.Connect();
        using var r = replica.Connect();
        RespAssert.Ok(m.Call("SET", "before", "snapshot"));
        RespAssert.Ok(r.Call("REPLICAOF", "127.0.0.1", masterTls.ToString()));
        ReplicaSetup.WaitInSync(m, r);
        RespAssert.Ok(m.Call("SET", "after", "stream"));
        RespAssert.Integer(1, m.Call("WAIT", "1", "5000"));
        RespAssert.Bulk("snapshot", r.Call("GET", "before"));
        RespAssert.Bulk("stream", r.Call("GET", "after"));

        // The replica came in through the TLS port, with its certificate, and announced its TLS port.
        var tls = InfoFields.Read(m, "tls");
        Assert.Equal("1", tls["tls_connected_clients"]);
        Assert.Equal("0", tls["tls_handshake_failures"]);
        Assert.Contains($"port={replicaTls},", InfoFields.Get(m, "replication", "slave0"));
    }

    [Fact]
    public void ThisServerFollowsARedisServerMasterOverTls()
    {
        int masterTls = ServerProcess.FreePort();
        using var master = RealRedisServer.Start(["--tls-port", masterTls.ToString(), .. TlsFiles(_certificates.Server("master"))]);
        using var replica = ServerProcess.Start(["--tls-replication", "yes", .. TlsFiles(_certificates.Server("replica"))]);
        using var m = master.Connect();
        using var r = replica.Connect();
        RespAssert.Ok(m.Call("SET", "before", "snapshot"));
        RespAssert.Ok(r.Call("REPLICAOF", "127.0.0.1", masterTls.ToString()));
        ReplicaSetup.WaitInSync(m, r);
        // Enough stream to cross many TLS records, read by the link's background TLS reads.
        Pipeline.RunAll(m, Enumerable.Range(0, 3000).Select(i => new[] { "SET", "k:" + i, new string('v', i % 500) }));
        RespAssert.Integer(1, m.Call("WAIT", "1", "10000"));
        ReplicaSetup.WaitInSync(m, r);
        RespAssert.Bulk("snapshot", r.Call("GET", "before"));
        RespAssert.Bulk(new string('v', 2999 % 500), r.Call("GET", "k:2999"));
        Assert.Equal("up", InfoFields.Get(r, "replication", "master_link_status"));
        // Redis sees a TLS replica (its own INFO has no TLS fields: the TLS port is what it listed).
        Assert.Contains("state=online", InfoFields.Get(m, "replication", "slave0"));
    }

    [Fact]
    public void AMasterWhoseCertificateTheCaDidNotSignIsNotFollowed()
    {
        var stranger = _certificates.Stranger("impostor");
        int masterTls = ServerProcess.FreePort();
        using var master = RealRedisServer.Start("--tls-port", masterTls.ToString(), "--tls-cert-file", stranger.CertFile, "--tls-key-file", stranger.KeyFile,
            "--tls-ca-cert-file", _certificates.CaFile, "--tls-auth-clients", "no");
        using var replica = ServerProcess.Start(["--tls-replication", "yes", .. TlsFiles(_certificates.Server("replica"))]);
        using var r = replica.Connect();
        RespAssert.Ok(r.Call("REPLICAOF", "127.0.0.1", masterTls.ToString()));
        Poll.Until(() => replica.Output.Contains("TLS handshake with the MASTER failed"), "the refused master certificate logged");
        Assert.Equal("down", InfoFields.Get(r, "replication", "master_link_status"));
    }
}
