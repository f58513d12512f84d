using System.Net.Security;

namespace Diagnostics.Server.Tls;

/// <summary>
/// tls-ciphers and tls-ciphersuites as .NET's <see cref="CipherSuitesPolicy"/>: Redis passes them to
/// OpenSSL, whose TLS 1.2 names (ECDHE-RSA-AES128-GCM-SHA256) differ from the IANA names .NET
/// takes (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256), and .NET exposes no conversion, hence this
/// table. It holds the suites OpenSSL 3 offers by default; a name outside it may be given in its
/// IANA form. OpenSSL's cipher-string keywords (HIGH, DEFAULT, !aNULL) are refused with a reason
/// rather than guessed at.
/// </summary>
public static class TlsCipherNames
{
    private static readonly Dictionary<string, TlsCipherSuite> OpenSslNames = new(StringComparer.OrdinalIgnoreCase)
    {
        ["ECDHE-ECDSA-AES256-GCM-SHA384"] = TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        ["ECDHE-RSA-AES256-GCM-SHA384"] = TlsCipherSuite.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        ["DHE-RSA-AES256-GCM-SHA384"] = TlsCipherSuite.TLS_DHE_RSA_WITH_AES_256_GCM_SHA384,
        ["ECDHE-ECDSA-CHACHA20-POLY1305"] = TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        ["ECDHE-RSA-CHACHA20-POLY1305"] = TlsCipherSuite.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        ["DHE-RSA-CHACHA20-POLY1305"] = TlsCipherSuite.TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        ["ECDHE-ECDSA-AES128-GCM-SHA256"] = TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        ["ECDHE-RSA-AES128-GCM-SHA256"] = TlsCipherSuite.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        ["DHE-RSA-AES128-GCM-SHA256"] = TlsCipherSuite.TLS_DHE_RSA_WITH_AES_128_GCM_SHA256,
        ["ECDHE-ECDSA-AES256-SHA384"] = TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384,
        ["ECDHE-RSA-AES256-SHA384"] = TlsCipherSuite.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384,
        ["DHE-RSA-AES256-SHA256"] = TlsCipherSuite.TLS_DHE_RSA_WITH_AES_256_CBC_SHA256,
        ["ECDHE-ECDSA-AES128-SHA256"] = TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
        ["ECDHE-RSA-AES128-SHA256"] = TlsCipherSuite.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256,
        ["DHE-RSA-AES128-SHA256"] = TlsCipherSuite.TLS_DHE_RSA_WITH_AES_128_CBC_SHA256,
        ["ECDHE-ECDSA-AES256-SHA"] = TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
        ["ECDHE-RSA-AES256-SHA"] = TlsCipherSuite.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
        ["DHE-RSA-AES256-SHA"] = TlsCipherSuite.TLS_DHE_RSA_WITH_AES_256_CBC_SHA,
        ["ECDHE-ECDSA-AES128-SHA"] = TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
        ["ECDHE-RSA-AES128-SHA"] = TlsCipherSuite.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
        ["DHE-RSA-AES128-SHA"] = TlsCipherSuite.TLS_DHE_RSA_WITH_AES_128_CBC_SHA,
        ["AES256-GCM-SHA384"] = TlsCipherSuite.TLS_RSA_WITH_AES_256_GCM_SHA384,
        ["AES128-GCM-SHA256"] = TlsCipherSuite.TLS_RSA_WITH_AES_128_GCM_SHA256,
        ["AES256-SHA256"] = TlsCipherSuite.TLS_RSA_WITH_AES_256_CBC_SHA256,
        ["AES128-SHA256"] = TlsCipherSuite.TLS_RSA_WITH_AES_128_CBC_SHA256,
        ["AES256-SHA"] = TlsCipherSuite.TLS_RSA_WITH_AES_256_CBC_SHA,
        ["AES128-SHA"] = TlsCipherSuite.TLS_RSA_WITH_AES_128_CBC_SHA,
    };

    private static readonly HashSet<string> Keywords = new(StringComparer.OrdinalIgnoreCase)
    {
        "ALL", "DEFAULT", "HIGH", "MEDIUM", "LOW", "EXPORT", "COMPLEMENTOFDEFAULT", "COMPLEMENTOFALL",
        "eNULL", "aNULL", "NULL", "kRSA", "aRSA", "ECDHE", "EECDH", "DHE", "EDH", "AES", "AESGCM", "CHACHA20", "SHA", "SHA256", "SHA384",
    };

    // OpenSSL 3's TLS 1.3 default, in its order; TLS 1.3 names are the same in OpenSSL and IANA.
    private static readonly TlsCipherSuite[] DefaultTls13 =
    [
        TlsCipherSuite.TLS_AES_256_GCM_SHA384,
        TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256,
        TlsCipherSuite.TLS_AES_128_GCM_SHA256,
    ];

    /// <summary>
    /// The policy for the two settings, or null when both are empty (the platform's default).
    /// One empty setting keeps OpenSSL's default for its protocol version, as in Redis.
    /// </summary>
    public static CipherSuitesPolicy? Policy(string ciphers, string cipherSuites)
    {
        if (ciphers.Length == 0 && cipherSuites.Length == 0)
            return null;
        var suites = new List<TlsCipherSuite>();
        if (ciphers.Length > 0)
            AddNamed(suites, ciphers, "tls-ciphers", tls13: false);
        else
            suites.AddRange(OpenSslNames.Values);
        if (cipherSuites.Length > 0)
            AddNamed(suites, cipherSuites, "tls-ciphersuites", tls13: true);
        else
            suites.AddRange(DefaultTls13);
        if (OperatingSystem.IsWindows())
            throw new TlsConfigurationException("tls-ciphers and tls-ciphersuites are not supported on Windows, where SChannel's system policy chooses the ciphers");
        return new CipherSuitesPolicy(suites);
    }

    private static void AddNamed(List<TlsCipherSuite> suites, string list, string setting, bool tls13)
    {
        foreach (string name in list.Split(':', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (OpenSslNames.TryGetValue(name, out var known))
                suites.Add(known);
            else if (name.StartsWith("TLS_", StringComparison.OrdinalIgnoreCase) && Enum.TryParse(name, ignoreCase: true, out TlsCipherSuite iana))
                suites.Add(iana);
            else if (name[0] is '!' or '+' or '-' or '@' || Keywords.Contains(name))
                throw new TlsConfigurationException($"Failed to configure {setting} '{list}': '{name}' is an OpenSSL cipher-string keyword; list the {(tls13 ? "TLS 1.3 suites" : "ciphers")} by name instead");
            else
                throw new TlsConfigurationException($"Failed to configure {setting} '{list}': unknown cipher '{name}'");
        }
        if (suites.Count == 0)
            throw new TlsConfigurationException($"Failed to configure {setting} '{list}': no cipher named");
    }
}
