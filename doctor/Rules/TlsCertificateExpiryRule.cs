using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// A TLS certificate in use (RESP's, or the HTTPS listener's when it has its own) expires soon (warning within 30 days, critical within 7 or once it
/// has): from then on every client that checks it refuses to connect. Measured against the time
/// the input was taken, so a debug package says what was true when it was made. A renewal that
/// was refused (INFO tls_last_reload_error) is named: it is usually why the old one is still in use.
/// </summary>
public sealed class TlsCertificateExpiryRule : IDoctorRule
{
    private const long Day = 86_400;
    public const int WarningDays = 30;
    public const int CriticalDays = 7;

    public string Id => "tls-certificate-expiry";
    public string Area => "security";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        var resp = Check(input, "tls_", "TLS", "tls-cert-file and tls-key-file");
        if (resp is not null)
            yield return resp;
        // The HTTPS listener's certificate, unless it is the same one (its own files, or none).
        if (input.InfoField("tls", "http_tls_cert_serial") is { } serial && serial != input.InfoField("tls", "tls_cert_serial")
            && Check(input, "http_tls_", "HTTPS", "http-tls-cert-file and http-tls-key-file (or tls-cert-file and tls-key-file)") is { } http)
            yield return http;
    }

    private Finding? Check(DoctorInput input, string prefix, string what, string files)
    {
        if (input.InfoInt64("tls", prefix + "enabled") != 1 || input.InfoField("tls", prefix + "cert_not_after") is null)
            return null;
        long notAfter = input.InfoInt64("tls", prefix + "cert_not_after");
        long left = notAfter - input.TakenUnixMs / 1000;
        if (left > WarningDays * Day)
            return null;
        string subject = input.InfoField("tls", prefix + "cert_subject") ?? "";
        string expires = DateTimeOffset.FromUnixTimeSeconds(notAfter).ToString("yyyy-MM-dd HH:mm 'UTC'", CultureInfo.InvariantCulture);
        string refused = input.InfoField("tls", prefix + "last_reload_error") ?? "";
        string when = left <= 0 ? $"expired {Human.Duration(-left * 1000)} ago ({expires})" : $"expires in {Human.Duration(left * 1000)} ({expires})";
        return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = left <= CriticalDays * Day ? FindingSeverity.Critical : FindingSeverity.Warning,
            Title = left <= 0 ? $"The {what} certificate has expired" : $"The {what} certificate expires in {Math.Max(0, left / Day)} days",
            Seen = $"The certificate in use ({subject}, serial {input.InfoField("tls", prefix + "cert_serial")}) {when}. "
                + (refused.Length > 0 ? $"The last certificate offered to replace it was refused: {refused}. " : "")
                + "Clients that verify it will refuse to connect once it expires.",
            Advice = $"Renew it and replace the files {files} name: the server takes a new pair within a couple of seconds, "
                + "without a restart, and keeps serving the old one if the new one cannot be used (the log and INFO tls say why).",
            Evidence = new()
            {
                [prefix + "cert_subject"] = subject,
                [prefix + "cert_not_after"] = notAfter.ToString(CultureInfo.InvariantCulture),
                ["seconds_left"] = left.ToString(CultureInfo.InvariantCulture),
                [prefix + "last_reload_error"] = refused,
            },
            Chart = MetricNames.TlsCertExpiresInDays,
        };
    }
}
