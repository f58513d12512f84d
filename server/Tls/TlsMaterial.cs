using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace Diagnostics.Server.Tls;

/// <summary>
/// One loaded TLS configuration: the handshake options every new connection uses and what the
/// diagnostics show of the certificate. Immutable; a reload builds a new one and swaps it in, so
/// a connection handshaking meanwhile sees the old or the new one whole, and connections already
/// up carry on with theirs.
/// </summary>
public sealed class TlsMaterial
{
    public required SslServerAuthenticationOptions ServerOptions { get; init; }
    /// <summary>What tls-auth-clients asked for when this was built.</summary>
    public required TlsClientAuth ClientAuth { get; init; }
    public required X509Certificate2 Certificate { get; init; }
    public required int AuthorityCount { get; init; }
    public required long LoadedUnixMs { get; init; }
    /// <summary>The files' sizes and times when they were read (see <see cref="CertificateFiles.Signature"/>).</summary>
    public required string FileSignature { get; init; }
    public required string Protocols { get; init; }
    /// <summary>tls-replication: what this server presents to its master (tls-client-cert-file, else its own pair), or null.</summary>
    public X509Certificate2? ClientCertificate { get; init; }
    /// <summary>The CA certificates as a chain policy (client certificates here, the master's certificate on a replica), or null.</summary>
    public X509ChainPolicy? Authorities { get; init; }

    public string Subject => Certificate.Subject;
    public string Issuer => Certificate.Issuer;
    public string SerialNumber => Certificate.SerialNumber;
    /// <summary>SHA-256 of the certificate, as browsers and openssl x509 -fingerprint -sha256 show it.</summary>
    public string Fingerprint => Certificate.GetCertHashString(System.Security.Cryptography.HashAlgorithmName.SHA256);
    public DateTime NotAfterUtc => Certificate.NotAfter.ToUniversalTime();
    public DateTime NotBeforeUtc => Certificate.NotBefore.ToUniversalTime();

    /// <summary>Seconds until the certificate expires (negative once it has).</summary>
    public long SecondsToExpiry(DateTime nowUtc) => (long)(NotAfterUtc - nowUtc).TotalSeconds;

    /// <summary>"CN=db1, serial 3A..., expires 2027-03-01T12:00:00Z": a certificate as the log names it.</summary>
    public string Describe() => $"{Subject}, serial {SerialNumber}, expires {NotAfterUtc:yyyy-MM-ddTHH:mm:ssZ}";

    /// <summary>
    /// The client certificate check as tls-auth-clients wants it: the chain was built against the
    /// CA certificates alone (the options' chain policy); "optional" lets a client without one in.
    /// </summary>
    public bool AcceptsClient(X509Certificate? certificate, SslPolicyErrors errors) => ClientAuth switch
    {
        TlsClientAuth.No => true,
        TlsClientAuth.Optional => certificate is null || errors == SslPolicyErrors.None,
        _ => certificate is not null && errors == SslPolicyErrors.None,
    };
}
