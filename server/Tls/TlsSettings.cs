namespace Diagnostics.Server.Tls;

/// <summary>tls-auth-clients: whether a TLS client must present a certificate the CA signed.</summary>
public enum TlsClientAuth
{
    No,
    Yes,
    Optional,
}

/// <summary>
/// The tls-* settings as redis.conf, the command line and CONFIG SET give them, named and
/// defaulted as in Redis 7.0. Plain values: <see cref="TlsContext"/> reads them when it builds
/// (or rebuilds) the server's TLS context, so a half-applied CONFIG SET is never in use.
/// </summary>
public sealed class TlsSettings
{
    /// <summary>tls-port: the TLS listener's port beside (or, with port 0, instead of) the plain one; 0 is none.</summary>
    public int Port { get; set; }
    public string CertFile { get; set; } = "";
    public string KeyFile { get; set; } = "";
    /// <summary>tls-key-file-pass: decrypts an encrypted (PKCS#8) key file; a secret.</summary>
    public string KeyFilePass { get; set; } = "";
    /// <summary>tls-client-cert-file/key-file/key-file-pass: what this server presents when it connects out (a replica to its master); the server's own pair when empty.</summary>
    public string ClientCertFile { get; set; } = "";
    public string ClientKeyFile { get; set; } = "";
    public string ClientKeyFilePass { get; set; } = "";
    public string DhParamsFile { get; set; } = "";
    public string CaCertFile { get; set; } = "";
    public string CaCertDir { get; set; } = "";
    public TlsClientAuth AuthClients { get; set; } = TlsClientAuth.Yes;
    /// <summary>tls-protocols: space-separated TLSv1 ... TLSv1.3; empty is TLSv1.2 and TLSv1.3, as in Redis.</summary>
    public string Protocols { get; set; } = "";
    /// <summary>tls-ciphers: the TLS 1.2 cipher list (OpenSSL's names, colon-separated); empty is the platform's default.</summary>
    public string Ciphers { get; set; } = "";
    /// <summary>tls-ciphersuites: the TLS 1.3 suites (colon-separated); empty is the platform's default.</summary>
    public string CipherSuites { get; set; } = "";
    public bool PreferServerCiphers { get; set; }
    public bool SessionCaching { get; set; } = true;
    public int SessionCacheSize { get; set; } = 20 * 1024;
    public int SessionCacheTimeoutSeconds { get; set; } = 300;
    /// <summary>tls-replication: this server's link to its master, and its replicas' links to it, use TLS.</summary>
    public bool Replication { get; set; }
    /// <summary>tls-cluster: accepted as in Redis; this server has no cluster bus yet.</summary>
    public bool Cluster { get; set; }

    /// <summary>True when something needs the TLS context: a TLS port, or TLS replication.</summary>
    public bool InUse => Port != 0 || Replication || Cluster;
}
