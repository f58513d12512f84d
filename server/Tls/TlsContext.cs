using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Diagnostics.Server.Tls;

/// <summary>
/// The server's TLS configuration in use (Redis's SSL_CTX): built from the tls-* settings at start,
/// rebuilt by CONFIG SET and when the certificate files change on disk. A configuration that
/// cannot be used (a missing file, a key that does not match, an expired certificate) is refused
/// with the reason in the log and the one in use stays, so a bad renewal never takes TLS down.
/// </summary>
/// <remarks>
/// One for RESP (tls-port, and later replication) and one for the HTTPS listener, which reads its
/// settings from <paramref name="source"/> each time it builds (its own pair, or the RESP one).
/// </remarks>
public sealed class TlsContext(string name, Func<TlsSettings> source, Func<bool> inUse, Func<string> directory, IReadOnlyList<SslApplicationProtocol>? applicationProtocols = null)
{
    private volatile TlsMaterial? _current;
    private readonly Lock _gate = new();

    public ILogger Log { get; set; } = NullLogger.Instance;
    /// <summary>"RESP" or "HTTPS": which listener this is, in the log.</summary>
    public string Name => name;
    /// <summary>The settings as they are now (the HTTPS listener's are derived, so read them once per use).</summary>
    public TlsSettings Settings => source();
    /// <summary>True while a listener or link needs this context.</summary>
    public bool InUse => inUse();
    public TlsStats Stats { get; } = new();

    /// <summary>The configuration new connections use; null until TLS was first configured.</summary>
    public TlsMaterial? Current => _current;

    public long Reloads { get; private set; }
    public long ReloadFailures { get; private set; }
    /// <summary>Why the last configuration was refused, or "" once one was accepted after it.</summary>
    public string LastError { get; private set; } = "";
    public long LastErrorUnixMs { get; private set; }

    /// <summary>
    /// Builds and swaps in a configuration from the settings as they are now. Returns null, or the
    /// reason it was refused (already logged); <paramref name="trigger"/> says in the log what asked.
    /// </summary>
    public string? Configure(string trigger)
    {
        lock (_gate)
        {
            var previous = _current;
            TlsMaterial material;
            try
            {
                material = Build(DateTime.UtcNow);
            }
            catch (TlsConfigurationException ex)
            {
                if (previous is null)
                    Log.LogWarning("{Listener} TLS configuration refused ({Trigger}): {Reason}", name, trigger, ex.Message);
                else
                    Log.LogWarning("{Listener} TLS configuration refused ({Trigger}): {Reason}. Still using the certificate loaded at {Loaded:u}: {Certificate}",
                        name, trigger, ex.Message, DateTimeOffset.FromUnixTimeMilliseconds(previous.LoadedUnixMs), previous.Describe());
                // Counted once logged: whoever sees the count finds the reason in the log.
                LastError = ex.Message;
                LastErrorUnixMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
                ReloadFailures++;
                return ex.Message;
            }
            _current = material;
            LastError = "";
            if (previous is not null)
                Reloads++;
            long days = material.SecondsToExpiry(DateTime.UtcNow) / 86_400;
            Log.LogInformation("{Listener} TLS certificate {Action} ({Trigger}): {Certificate} (in {Days} days), protocols {Protocols}, client certificates {ClientAuth}",
                name, previous is null ? "loaded" : "reloaded", trigger, material.Describe(), days, material.Protocols,
                material.ClientAuth.ToString().ToLowerInvariant());
            // Connections still handshaking with the old options keep them alive; the context's
            // native handles go with the last reference, so the old certificate is not disposed here.
            return null;
        }
    }

    /// <summary>
    /// How a replica meets its master over TLS (tls-replication): its certificate, the master's
    /// checked against the CA certificates only. As Redis, the master's name is not checked (a
    /// master is reached by address, and Sentinel may move it).
    /// </summary>
    public SslClientAuthenticationOptions ClientOptions(string host)
    {
        var material = _current ?? throw new IOException("TLS is not configured: tls-replication needs tls-cert-file, tls-key-file and tls-ca-cert-file");
        var settings = source();
        var options = new SslClientAuthenticationOptions
        {
            TargetHost = host,
            EnabledSslProtocols = TlsProtocols.Parse(settings.Protocols),
            CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
            CipherSuitesPolicy = TlsCipherNames.Policy(settings.Ciphers, settings.CipherSuites),
            RemoteCertificateValidationCallback = (_, certificate, _, errors) =>
                certificate is not null && (errors & ~SslPolicyErrors.RemoteCertificateNameMismatch) == SslPolicyErrors.None,
        };
        if (material.Authorities is { } authorities)
            options.CertificateChainPolicy = authorities;
        if (material.ClientCertificate is { } mine)
            options.ClientCertificates = [mine];
        return options;
    }

    /// <summary>The certificate files as they are on disk now, for the watcher to compare.</summary>
    public string FileSignatureNow() => FileSignature(source());

    private string FileSignature(TlsSettings settings) => CertificateFiles.Signature(InDir(settings.CertFile), InDir(settings.KeyFile), InDir(settings.CaCertFile), InDir(settings.CaCertDir));

    /// <summary>A relative path is relative to dir, as in Redis (which changes into dir before it reads these files).</summary>
    private string InDir(string path) => path.Length == 0 || Path.IsPathRooted(path) ? path : Path.Combine(directory(), path);

    private TlsMaterial Build(DateTime nowUtc)
    {
        var settings = source();
        // Read the signature first: a file replaced while being read then shows as changed again.
        string signature = FileSignature(settings);
        var protocols = TlsProtocols.Parse(settings.Protocols);
        var (certificate, intermediates) = CertificateFiles.LoadPair(InDir(settings.CertFile), InDir(settings.KeyFile), settings.KeyFilePass, "tls");
        if (certificate.NotAfter.ToUniversalTime() <= nowUtc)
            throw new TlsConfigurationException($"tls-cert-file {settings.CertFile}: the certificate {certificate.Subject} expired on {certificate.NotAfter.ToUniversalTime():yyyy-MM-ddTHH:mm:ssZ}");
        if (certificate.NotBefore.ToUniversalTime() > nowUtc)
            throw new TlsConfigurationException($"tls-cert-file {settings.CertFile}: the certificate {certificate.Subject} is not valid before {certificate.NotBefore.ToUniversalTime():yyyy-MM-ddTHH:mm:ssZ}");
        bool needsAuthorities = settings.AuthClients != TlsClientAuth.No || settings.Replication || settings.Cluster;
        if (needsAuthorities && settings.CaCertFile.Length == 0 && settings.CaCertDir.Length == 0)
            throw new TlsConfigurationException("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!");
        X509Certificate2Collection? authorities = settings.CaCertFile.Length > 0 || settings.CaCertDir.Length > 0
            ? CertificateFiles.LoadAuthorities(InDir(settings.CaCertFile), InDir(settings.CaCertDir))
            : null;
        CertificateFiles.CheckDhParams(InDir(settings.DhParamsFile));
        var cipherPolicy = TlsCipherNames.Policy(settings.Ciphers, settings.CipherSuites);

        var options = new SslServerAuthenticationOptions
        {
            // offline: never fetch missing intermediates from the network while building the chain.
            ServerCertificateContext = SslStreamCertificateContext.Create(certificate, intermediates, offline: true),
            EnabledSslProtocols = protocols,
            ClientCertificateRequired = settings.AuthClients != TlsClientAuth.No,
            // As OpenSSL by default in Redis: no CRL or OCSP lookups on client certificates.
            CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
            CipherSuitesPolicy = cipherPolicy,
            AllowTlsResume = settings.SessionCaching,
            ApplicationProtocols = applicationProtocols?.ToList(),
        };
        var chainPolicy = authorities is null ? null : ChainPolicy(authorities);
        if (chainPolicy is not null)
            options.CertificateChainPolicy = chainPolicy;
        X509Certificate2? clientCertificate = null;
        if (settings.Replication)
            clientCertificate = settings.ClientCertFile.Length > 0
                ? CertificateFiles.LoadPair(InDir(settings.ClientCertFile), InDir(settings.ClientKeyFile), settings.ClientKeyFilePass, "tls-client").Certificate
                : certificate;
        return new TlsMaterial
        {
            ClientCertificate = clientCertificate,
            Authorities = chainPolicy,
            ServerOptions = options,
            ClientAuth = settings.AuthClients,
            Certificate = certificate,
            AuthorityCount = authorities?.Count ?? 0,
            LoadedUnixMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(),
            FileSignature = signature,
            Protocols = TlsProtocols.Format(protocols),
        };
    }

    /// <summary>
    /// Client certificates chain to the configured CA certificates only, not to the machine's
    /// trust store (as OpenSSL with Redis's CA settings): self-signed ones are the anchors, the
    /// others intermediates.
    /// </summary>
    private static X509ChainPolicy ChainPolicy(X509Certificate2Collection authorities)
    {
        var policy = new X509ChainPolicy
        {
            TrustMode = X509ChainTrustMode.CustomRootTrust,
            RevocationMode = X509RevocationMode.NoCheck,
            DisableCertificateDownloads = true,
        };
        foreach (var authority in authorities)
        {
            if (authority.SubjectName.RawData.AsSpan().SequenceEqual(authority.IssuerName.RawData))
                policy.CustomTrustStore.Add(authority);
            else
                policy.ExtraStore.Add(authority);
        }
        return policy;
    }
}
