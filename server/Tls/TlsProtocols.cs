using System.Security.Authentication;

namespace Diagnostics.Server.Tls;

/// <summary>tls-protocols in Redis's words (TLSv1 ... TLSv1.3) as .NET's protocol flags.</summary>
public static class TlsProtocols
{
    public static SslProtocols Parse(string text)
    {
        if (text.Trim().Length == 0)
            return SslProtocols.Tls12 | SslProtocols.Tls13;
        var protocols = SslProtocols.None;
        foreach (string word in text.Split(' ', StringSplitOptions.RemoveEmptyEntries))
        {
#pragma warning disable SYSLIB0039 // TLS 1.0 and 1.1 are obsolete, and still Redis's to allow when asked.
            protocols |= word.ToLowerInvariant() switch
            {
                "tlsv1" => SslProtocols.Tls,
                "tlsv1.1" => SslProtocols.Tls11,
                "tlsv1.2" => SslProtocols.Tls12,
                "tlsv1.3" => SslProtocols.Tls13,
                _ => throw new TlsConfigurationException("Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'."),
            };
#pragma warning restore SYSLIB0039
        }
        return protocols;
    }

    public static string Format(SslProtocols protocols)
    {
        var words = new List<string>(4);
#pragma warning disable SYSLIB0039
        if ((protocols & SslProtocols.Tls) != 0) words.Add("TLSv1");
        if ((protocols & SslProtocols.Tls11) != 0) words.Add("TLSv1.1");
#pragma warning restore SYSLIB0039
        if ((protocols & SslProtocols.Tls12) != 0) words.Add("TLSv1.2");
        if ((protocols & SslProtocols.Tls13) != 0) words.Add("TLSv1.3");
        return string.Join(' ', words);
    }
}
