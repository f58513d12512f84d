using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Diagnostics.Server.Tls;

/// <summary>
/// Reads the PEM files Redis's tls-* settings name, with the platform's own PEM readers. The key
/// stays in memory: it is never written to a temporary file, and no message here quotes a key,
/// a password or a file's content, only paths and what was wrong.
/// </summary>
public static class CertificateFiles
{
    /// <summary>
    /// The certificate (the file's first), its private key, and any intermediates after it in the
    /// certificate file. Throws <see cref="TlsConfigurationException"/> with the reason.
    /// </summary>
    public static (X509Certificate2 Certificate, X509Certificate2Collection Intermediates) LoadPair(string certFile, string keyFile, string password, string setting)
    {
        if (certFile.Length == 0)
            throw new TlsConfigurationException($"No {setting}-cert-file configured!");
        if (keyFile.Length == 0)
            throw new TlsConfigurationException($"No {setting}-key-file configured!");
        Readable(certFile, $"{setting}-cert-file");
        Readable(keyFile, $"{setting}-key-file");
        X509Certificate2 certificate;
        try
        {
            certificate = password.Length > 0
                ? X509Certificate2.CreateFromEncryptedPemFile(certFile, password, keyFile)
                : X509Certificate2.CreateFromPemFile(certFile, keyFile);
        }
        catch (CryptographicException ex)
        {
            // .NET names the part it could not use ("The key contents...", "The certificate contents...").
            bool aboutKey = ex.Message.Contains("key", StringComparison.OrdinalIgnoreCase);
            string hint = !aboutKey ? ""
                : password.Length > 0 ? $" (the key must be PKCS#8, \"BEGIN ENCRYPTED PRIVATE KEY\", and {setting}-key-file-pass its password)"
                : $" (an encrypted key needs {setting}-key-file-pass)";
            throw new TlsConfigurationException($"Failed to load certificate {certFile} with private key {keyFile}: {ex.Message}{hint}");
        }
        catch (ArgumentException ex)
        {
            throw new TlsConfigurationException($"Failed to load certificate {certFile} with private key {keyFile}: {ex.Message}");
        }
        // Windows' TLS stack (SChannel) cannot use an ephemeral key; a PKCS#12 round trip in memory
        // gives it a usable one without writing the key anywhere.
        if (OperatingSystem.IsWindows())
        {
            using var ephemeral = certificate;
            certificate = X509CertificateLoader.LoadPkcs12(ephemeral.Export(X509ContentType.Pkcs12), null);
        }
        var chain = new X509Certificate2Collection();
        chain.ImportFromPemFile(certFile);
        var intermediates = new X509Certificate2Collection();
        for (int i = 1; i < chain.Count; i++)
            intermediates.Add(chain[i]);
        chain[0].Dispose();
        return (certificate, intermediates);
    }

    /// <summary>
    /// The CA certificates clients' certificates must chain to: every certificate of the CA file,
    /// then of each PEM file in the CA directory (OpenSSL's hashed names or plain .pem/.crt files).
    /// </summary>
    public static X509Certificate2Collection LoadAuthorities(string caFile, string caDir)
    {
        var authorities = new X509Certificate2Collection();
        if (caFile.Length > 0)
        {
            Readable(caFile, "tls-ca-cert-file");
            Import(authorities, caFile, "tls-ca-cert-file");
        }
        if (caDir.Length > 0)
        {
            if (!Directory.Exists(caDir))
                throw new TlsConfigurationException($"Failed to configure CA certificate(s) file/directory: tls-ca-cert-dir {caDir} is not a directory");
            foreach (string path in Directory.EnumerateFiles(caDir))
            {
                // A directory also holds CRLs and other files OpenSSL skips; only certificates count.
                if (!LooksLikeCertificate(path))
                    continue;
                Import(authorities, path, "tls-ca-cert-dir");
            }
        }
        if (authorities.Count == 0)
            throw new TlsConfigurationException("Failed to configure CA certificate(s) file/directory: no certificate found in "
                + (caFile.Length > 0 ? caFile : caDir));
        return authorities;
    }

    /// <summary>tls-dh-params-file must name a readable file of DH parameters, as Redis checks; .NET uses the TLS library's groups.</summary>
    public static void CheckDhParams(string path)
    {
        if (path.Length == 0)
            return;
        Readable(path, "tls-dh-params-file");
        if (!File.ReadAllText(path).Contains("-----BEGIN DH PARAMETERS-----", StringComparison.Ordinal))
            throw new TlsConfigurationException($"Failed to load {path}: no DH parameters found");
    }

    /// <summary>The files' sizes and modification times: what the watcher compares to see a replaced certificate.</summary>
    public static string Signature(params string[] paths)
    {
        var text = new System.Text.StringBuilder();
        foreach (string path in paths)
        {
            if (path.Length == 0)
                continue;
            if (File.Exists(path))
            {
                var info = new FileInfo(path);
                text.Append(path).Append('=').Append(info.Length).Append('@').Append(info.LastWriteTimeUtc.Ticks).Append(';');
            }
            else if (Directory.Exists(path))
            {
                text.Append(path).Append("=dir@").Append(Directory.GetLastWriteTimeUtc(path).Ticks).Append(';');
                foreach (string file in Directory.EnumerateFiles(path))
                    text.Append(Signature(file));
            }
            else
                text.Append(path).Append("=missing;");
        }
        return text.ToString();
    }

    private static void Import(X509Certificate2Collection into, string path, string setting)
    {
        try
        {
            into.ImportFromPemFile(path);
        }
        catch (CryptographicException ex)
        {
            throw new TlsConfigurationException($"Failed to configure CA certificate(s) file/directory: {setting} {path}: {ex.Message}");
        }
    }

    private static bool LooksLikeCertificate(string path)
    {
        try
        {
            using var reader = new StreamReader(path);
            var head = new char[4096];
            int read = reader.ReadBlock(head, 0, head.Length);
            return head.AsSpan(0, read).IndexOf("-----BEGIN CERTIFICATE-----") >= 0;
        }
        catch (IOException)
        {
            return false;
        }
        catch (UnauthorizedAccessException)
        {
            return false;
        }
    }

    private static void Readable(string path, string setting)
    {
        if (!File.Exists(path))
            throw new TlsConfigurationException($"{setting} {path}: No such file or directory");
        try
        {
            using var _ = File.OpenRead(path);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            throw new TlsConfigurationException($"{setting} {path}: {ex.Message}");
        }
    }
}

/// <summary>A TLS setting or file that cannot be used, with a reason fit for the log (never a secret).</summary>
public sealed class TlsConfigurationException(string message) : Exception(message);
