using System.Globalization;
using Diagnostics.Server.Tls;

namespace Diagnostics.Server.Configuration;

public sealed partial class ServerConfig
{
    /// <summary>The tls-* settings (Tls/TlsContext reads them).</summary>
    public TlsSettings Tls { get; } = new();

    /// <summary>
    /// Rebuilds the server's TLS context from <see cref="Tls"/> after CONFIG SET changed it; null on
    /// success or Redis's reason. Set by the server once its TLS context exists.
    /// </summary>
    public Func<string?>? TlsChanged { get; set; }

    /// <summary>Moves the TLS listener to the new tls-port (0 closes it); null on success or Redis's reason. Set by the listener.</summary>
    public Func<string?>? TlsPortChanged { get; set; }

    /// <summary>http-tls-port: the HTTPS listener (API, studio, /metrics) beside http-port; 0 is none.</summary>
    public int HttpTlsPort { get; private set; }
    /// <summary>http-tls-cert-file / key-file / key-file-pass: the HTTPS listener's own pair; empty uses tls-cert-file and tls-key-file.</summary>
    public string HttpTlsCertFile { get; private set; } = "";
    public string HttpTlsKeyFile { get; private set; } = "";
    public string HttpTlsKeyFilePass { get; private set; } = "";
    /// <summary>
    /// http-allow-plaintext: serve plain HTTP to clients beyond loopback too (a TLS-terminating
    /// proxy on another host). Off by default: secrets and values would cross the network in clear.
    /// </summary>
    public bool HttpAllowPlaintext { get; private set; }

    /// <summary>Rebuilds the HTTPS listener's TLS context after CONFIG SET; null on success or the reason. Set by the server.</summary>
    public Func<string?>? HttpTlsChanged { get; set; }

    /// <summary>
    /// What the HTTPS listener's TLS context is built from: its own certificate pair if given,
    /// else the RESP one, with tls-protocols and the cipher settings, and never client certificates
    /// (browsers log in with a password or key, not a certificate).
    /// </summary>
    public TlsSettings HttpTlsSettings()
    {
        bool own = HttpTlsCertFile.Length > 0;
        return new TlsSettings
        {
            Port = HttpTlsPort,
            CertFile = own ? HttpTlsCertFile : Tls.CertFile,
            KeyFile = own ? HttpTlsKeyFile : Tls.KeyFile,
            KeyFilePass = own ? HttpTlsKeyFilePass : Tls.KeyFilePass,
            Protocols = Tls.Protocols,
            Ciphers = Tls.Ciphers,
            CipherSuites = Tls.CipherSuites,
            SessionCaching = Tls.SessionCaching,
            AuthClients = TlsClientAuth.No,
        };
    }

    private const string TlsUpdateFailed = "Unable to update TLS configuration. Check server logs.";

    // Redis 7.0's tls-* settings, in its order, with its defaults and its apply functions: every
    // file, protocol and cipher setting rebuilds the context once per CONFIG SET (so a new
    // certificate and its key are set together), and a refused context keeps the old one.
    private void AddTlsParameters()
    {
        var tls = Tls;
        Add(new ConfigParameter("tls-port", () => tls.Port.ToString(CultureInfo.InvariantCulture), ParseInteger(0, 65535, v => tls.Port = (int)v)) { Apply = ApplyTlsPort });
        TlsString("tls-cert-file", () => tls.CertFile, v => tls.CertFile = v);
        TlsString("tls-key-file", () => tls.KeyFile, v => tls.KeyFile = v);
        TlsString("tls-key-file-pass", () => tls.KeyFilePass, v => tls.KeyFilePass = v, ConfigSecrecy.Sensitive);
        TlsString("tls-client-cert-file", () => tls.ClientCertFile, v => tls.ClientCertFile = v);
        TlsString("tls-client-key-file", () => tls.ClientKeyFile, v => tls.ClientKeyFile = v);
        TlsString("tls-client-key-file-pass", () => tls.ClientKeyFilePass, v => tls.ClientKeyFilePass = v, ConfigSecrecy.Sensitive);
        TlsString("tls-dh-params-file", () => tls.DhParamsFile, v => tls.DhParamsFile = v);
        TlsString("tls-ca-cert-file", () => tls.CaCertFile, v => tls.CaCertFile = v);
        TlsString("tls-ca-cert-dir", () => tls.CaCertDir, v => tls.CaCertDir = v);
        TlsString("tls-protocols", () => tls.Protocols, v => tls.Protocols = v);
        TlsString("tls-ciphers", () => tls.Ciphers, v => tls.Ciphers = v);
        TlsString("tls-ciphersuites", () => tls.CipherSuites, v => tls.CipherSuites = v);
        TlsFlag("tls-cluster", () => tls.Cluster, v => tls.Cluster = v);
        TlsFlag("tls-replication", () => tls.Replication, v => tls.Replication = v);
        // Read per connection in Redis (no apply function); here it is part of the context, rebuilt the same way.
        Add(new ConfigParameter("tls-auth-clients", () => tls.AuthClients.ToString().ToLowerInvariant(),
            v => OneOf(v, ["no", "yes", "optional"], s => tls.AuthClients = Enum.Parse<TlsClientAuth>(s, ignoreCase: true))) { Apply = ApplyTls });
        TlsFlag("tls-prefer-server-ciphers", () => tls.PreferServerCiphers, v => tls.PreferServerCiphers = v);
        TlsFlag("tls-session-caching", () => tls.SessionCaching, v => tls.SessionCaching = v);
        TlsInt("tls-session-cache-size", () => tls.SessionCacheSize, v => tls.SessionCacheSize = v);
        TlsInt("tls-session-cache-timeout", () => tls.SessionCacheTimeoutSeconds, v => tls.SessionCacheTimeoutSeconds = v);

        // This server's own: HTTPS for the studio and API.
        Add(new ConfigParameter("http-tls-port", () => HttpTlsPort.ToString(CultureInfo.InvariantCulture), ParseInteger(0, 65535, v => HttpTlsPort = (int)v), mutable: false));
        Add(new ConfigParameter("http-tls-cert-file", () => HttpTlsCertFile, v => { HttpTlsCertFile = v; return null; }) { Apply = ApplyTls });
        Add(new ConfigParameter("http-tls-key-file", () => HttpTlsKeyFile, v => { HttpTlsKeyFile = v; return null; }) { Apply = ApplyTls });
        Add(new ConfigParameter("http-tls-key-file-pass", () => HttpTlsKeyFilePass, v => { HttpTlsKeyFilePass = v; return null; }) { Apply = ApplyTls, Secrecy = ConfigSecrecy.Sensitive });
        Add(new ConfigParameter("http-allow-plaintext", () => HttpAllowPlaintext ? "yes" : "no", ParseYesNo(v => HttpAllowPlaintext = v)));
    }

    // Redis's applyTlsCfg: nothing to rebuild while no listener or link uses TLS. The HTTPS
    // listener may use the same files, so it is rebuilt with them.
    private string? ApplyTls()
    {
        bool refused = Tls.InUse && TlsChanged?.Invoke() is not null;
        refused |= HttpTlsPort != 0 && HttpTlsChanged?.Invoke() is not null;
        return refused ? TlsUpdateFailed : null;
    }

    // Redis's applyTLSPort: configure TLS if it was not, then move the listener.
    private string? ApplyTlsPort()
    {
        if (Tls.Port != 0 && TlsChanged?.Invoke() is not null)
            return TlsUpdateFailed;
        // No listener to move (the kestrel transport): only "no TLS port" can be true.
        string? problem = TlsPortChanged is { } change ? change() : Tls.Port == 0 ? null : "no TLS listener with the kestrel transport";
        return problem is null ? null : "Unable to listen on this port. Check server logs.";
    }

    private void TlsString(string name, Func<string> get, Action<string> set, ConfigSecrecy secrecy = ConfigSecrecy.Public)
        => Add(new ConfigParameter(name, get, v => { set(v); return null; }) { Apply = ApplyTls, Secrecy = secrecy });

    private void TlsFlag(string name, Func<bool> get, Action<bool> set)
        => Add(new ConfigParameter(name, () => get() ? "yes" : "no", ParseYesNo(set)) { Apply = ApplyTls });

    private void TlsInt(string name, Func<int> get, Action<int> set)
        => Add(new ConfigParameter(name, () => get().ToString(CultureInfo.InvariantCulture), ParseInteger(0, int.MaxValue, v => set((int)v))) { Apply = ApplyTls });
}
