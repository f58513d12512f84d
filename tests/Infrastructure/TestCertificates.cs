using System.Net;
using System.Net.Security;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// A test's own certificate authority and the PEM files Redis's tls-* settings name, made with
/// .NET's CertificateRequest in a private temporary folder: a CA, server certificates for
/// localhost / 127.0.0.1 (as many as a test replaces), client certificates, and broken ones.
/// </summary>
public sealed class TestCertificates : IDisposable
{
    private readonly TempDirectory _directory = new("diagnostics-tls-");
    private readonly X509Certificate2 _authority;
    private readonly RSA _authorityKey;

    public TestCertificates()
    {
        _authorityKey = RSA.Create(2048);
        var request = new CertificateRequest("CN=Diagnostics Test CA", _authorityKey, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, true));
        _authority = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-60), DateTimeOffset.UtcNow.AddYears(1));
        CaFile = _directory.File("ca.crt");
        File.WriteAllText(CaFile, _authority.ExportCertificatePem());
    }

    public string Directory => _directory.Path;
    public string CaFile { get; }

    public sealed record Pair(string CertFile, string KeyFile, string SerialNumber, X509Certificate2 Certificate)
    {
        /// <summary>Base64 SHA-256 of the certificate's public key (SPKI): what a browser pins.</summary>
        public string PublicKeyHash => Convert.ToBase64String(SHA256.HashData(Certificate.PublicKey.ExportSubjectPublicKeyInfo()));
    }

    /// <summary>A server certificate for localhost and 127.0.0.1 signed by the CA, valid from yesterday for <paramref name="days"/> days.</summary>
    public Pair Server(string name, double days = 90, string? keyPassword = null)
        => Issue(name, $"CN={name}", server: true, DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(days), keyPassword);

    /// <summary>A server certificate whose validity ended yesterday.</summary>
    public Pair Expired(string name)
        => Issue(name, $"CN={name}", server: true, DateTimeOffset.UtcNow.AddDays(-30), DateTimeOffset.UtcNow.AddDays(-1), null);

    public Pair Client(string name)
        => Issue(name, $"CN={name}", server: false, DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(90), null);

    /// <summary>A client certificate no configured CA signed (its own self-signed one).</summary>
    public Pair Stranger(string name)
    {
        using var key = RSA.Create(2048);
        var request = new CertificateRequest($"CN={name}", key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        var certificate = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(30));
        return Write(name, certificate, key, null);
    }

    /// <summary>
    /// <paramref name="first"/> copied to fixed file names, as a server is configured once with
    /// paths that renewals then replace (see <see cref="Replace"/>).
    /// </summary>
    public (string CertFile, string KeyFile) Live(Pair first, string name = "live")
    {
        string certFile = _directory.File(name + ".crt"), keyFile = _directory.File(name + ".key");
        File.Copy(first.CertFile, certFile, overwrite: true);
        File.Copy(first.KeyFile, keyFile, overwrite: true);
        return (certFile, keyFile);
    }

    /// <summary>Replaces <paramref name="target"/> whole by renaming a copy of <paramref name="source"/> over it, as certbot or a secret update does.</summary>
    public void Replace(string source, string target)
    {
        string staged = _directory.File(Guid.NewGuid().ToString("N") + ".staged");
        File.Copy(source, staged);
        File.Move(staged, target, overwrite: true);
    }

    /// <summary>A file of the given text in the certificates' folder (a broken certificate, say).</summary>
    public string Write(string content)
    {
        string path = _directory.File(Guid.NewGuid().ToString("N") + ".tmp");
        File.WriteAllText(path, content);
        return path;
    }

    /// <summary>Options for a test client: trusts only this CA, presents <paramref name="client"/> if given.</summary>
    public SslClientAuthenticationOptions ClientOptions(Pair? client = null, System.Security.Authentication.SslProtocols protocols = System.Security.Authentication.SslProtocols.None)
    {
        var policy = new X509ChainPolicy { TrustMode = X509ChainTrustMode.CustomRootTrust, RevocationMode = X509RevocationMode.NoCheck };
        policy.CustomTrustStore.Add(_authority);
        var options = new SslClientAuthenticationOptions
        {
            TargetHost = "localhost",
            CertificateChainPolicy = policy,
            EnabledSslProtocols = protocols,
        };
        if (client is not null)
            options.ClientCertificates = [X509Certificate2.CreateFromPemFile(client.CertFile, client.KeyFile)];
        return options;
    }

    private Pair Issue(string name, string subject, bool server, DateTimeOffset notBefore, DateTimeOffset notAfter, string? keyPassword)
    {
        using var key = RSA.Create(2048);
        var request = new CertificateRequest(subject, key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, false));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature | X509KeyUsageFlags.KeyEncipherment, true));
        // Server certificates serve as clients too (a replica presents its own to its master), as Redis's examples make them.
        var usages = new OidCollection { new Oid("1.3.6.1.5.5.7.3.2") };
        if (server)
            usages.Add(new Oid("1.3.6.1.5.5.7.3.1"));
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension(usages, false));
        if (server)
        {
            var names = new SubjectAlternativeNameBuilder();
            names.AddDnsName("localhost");
            names.AddIpAddress(IPAddress.Loopback);
            request.CertificateExtensions.Add(names.Build());
        }
        byte[] serial = RandomNumberGenerator.GetBytes(16);
        serial[0] &= 0x7F;
        using var issued = request.Create(_authority, notBefore, notAfter, serial);
        return Write(name, issued, key, keyPassword);
    }

    private Pair Write(string name, X509Certificate2 certificate, RSA key, string? keyPassword)
    {
        string certFile = _directory.File(name + ".crt");
        string keyFile = _directory.File(name + ".key");
        File.WriteAllText(certFile, certificate.ExportCertificatePem());
        File.WriteAllText(keyFile, keyPassword is null
            ? key.ExportPkcs8PrivateKeyPem()
            : key.ExportEncryptedPkcs8PrivateKeyPem(keyPassword, new PbeParameters(PbeEncryptionAlgorithm.Aes256Cbc, HashAlgorithmName.SHA256, 100_000)));
        return new Pair(certFile, keyFile, certificate.SerialNumber, X509CertificateLoader.LoadCertificate(certificate.RawData));
    }

    public void Dispose()
    {
        _authority.Dispose();
        _authorityKey.Dispose();
        _directory.Dispose();
    }
}
