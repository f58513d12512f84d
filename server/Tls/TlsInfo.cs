using System.Text;
using Diagnostics.Server.Diagnostics.Info;

namespace Diagnostics.Server.Tls;

/// <summary>
/// INFO tls (this server's own section; Redis has none): the certificate in use and when it
/// expires, reloads and why the last was refused, and the handshakes by outcome. The doctor's
/// certificate rule and the studio read these fields, live and from a debug package alike.
/// </summary>
public static class TlsInfo
{
    public static void Write(StringBuilder text, DataServer server)
    {
        var tls = server.Tls;
        var settings = tls.Settings;
        var current = tls.Current;
        InfoBuilder.Field(text, "tls_enabled", current is null ? 0 : 1);
        InfoBuilder.Field(text, "tls_port", settings.Port);
        InfoBuilder.Field(text, "tls_replication", settings.Replication ? 1 : 0);
        InfoBuilder.Field(text, "tls_auth_clients", settings.AuthClients.ToString().ToLowerInvariant());
        WriteContext(text, "tls_", tls);
        // The HTTPS listener's certificate (the same files or its own), reloaded the same way.
        InfoBuilder.Field(text, "http_tls_enabled", server.HttpTls.Current is null ? 0 : 1);
        InfoBuilder.Field(text, "http_tls_port", server.Config.HttpTlsPort);
        WriteContext(text, "http_tls_", server.HttpTls);
        var stats = tls.Stats;
        InfoBuilder.Field(text, "tls_connected_clients", stats.Connected);
        InfoBuilder.Field(text, "tls_handshakes", stats.Handshakes);
        InfoBuilder.Field(text, "tls_handshake_usec", stats.HandshakeMicros);
        InfoBuilder.Field(text, "tls_handshake_usec_per_call", stats.Handshakes == 0 ? 0 : stats.HandshakeMicros / stats.Handshakes);
        InfoBuilder.Field(text, "tls_handshake_failures", stats.TotalFailures);
        for (int i = 0; i < TlsStats.FailureNames.Length; i++)
            InfoBuilder.Field(text, "tls_handshake_failures_" + TlsStats.FailureNames[i], stats.Failures((TlsHandshakeFailure)i));
    }

    private static void WriteContext(StringBuilder text, string prefix, TlsContext tls)
    {
        if (tls.Current is { } current)
        {
            long now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
            long notAfter = new DateTimeOffset(current.NotAfterUtc).ToUnixTimeSeconds();
            InfoBuilder.Field(text, prefix + "protocols", current.Protocols);
            InfoBuilder.Field(text, prefix + "cert_subject", OneLine(current.Subject));
            InfoBuilder.Field(text, prefix + "cert_issuer", OneLine(current.Issuer));
            InfoBuilder.Field(text, prefix + "cert_serial", current.SerialNumber);
            InfoBuilder.Field(text, prefix + "cert_sha256", current.Fingerprint);
            InfoBuilder.Field(text, prefix + "cert_not_before", new DateTimeOffset(current.NotBeforeUtc).ToUnixTimeSeconds());
            InfoBuilder.Field(text, prefix + "cert_not_after", notAfter);
            InfoBuilder.Field(text, prefix + "cert_expires_in_seconds", notAfter - now);
            InfoBuilder.Field(text, prefix + "cert_expires_in_days", (notAfter - now) / 86_400);
            InfoBuilder.Field(text, prefix + "ca_certs", current.AuthorityCount);
            InfoBuilder.Field(text, prefix + "loaded_at", current.LoadedUnixMs / 1000);
        }
        InfoBuilder.Field(text, prefix + "reloads", tls.Reloads);
        InfoBuilder.Field(text, prefix + "reload_failures", tls.ReloadFailures);
        InfoBuilder.Field(text, prefix + "last_reload_error", OneLine(tls.LastError));
    }

    // Values are single-line; a subject's commas and an error's colons are fine after the field's own colon.
    private static string OneLine(string value) => value.Replace('\r', ' ').Replace('\n', ' ');
}
