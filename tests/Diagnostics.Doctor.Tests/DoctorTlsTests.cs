using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The TLS certificate's expiry as the doctor sees it, live and from a debug package: a warning
/// within 30 days, critical within 7, nothing before; and a renewal that was refused is named in
/// the finding, since it is what keeps the old certificate in use.
/// </summary>
public sealed class DoctorTlsTests : IDisposable
{
    private readonly TestCertificates _certificates = new();

    public void Dispose() => _certificates.Dispose();

    private ServerProcess StartWith(TestCertificates.Pair pair, string? certFile = null, string? keyFile = null)
        => ServerProcess.Start("--tls-port", ServerProcess.FreePort().ToString(), "--tls-cert-file", certFile ?? pair.CertFile,
            "--tls-key-file", keyFile ?? pair.KeyFile, "--tls-auth-clients", "no");

    [Fact]
    public void ACertificateFarFromExpiryIsNoFinding()
    {
        using var server = StartWith(_certificates.Server("fresh", days: 200));
        DoctorProbe.AssertAbsent(server, "tls-certificate-expiry");
    }

    [Fact]
    public void WithinThirtyDaysIsAWarningAndWithinSevenCritical()
    {
        var soon = _certificates.Server("soon", days: 20);
        using (var server = StartWith(soon))
        {
            var (live, offline) = LiveAndOffline.Expect(server, "tls-certificate-expiry");
            foreach (var finding in new[] { live, offline })
            {
                Assert.Equal(FindingSeverity.Warning, finding.Severity);
                Assert.Equal("The TLS certificate expires in 19 days", finding.Title);
                Assert.Contains("CN=soon", finding.Seen);
                Assert.Contains(soon.SerialNumber, finding.Seen);
                Assert.Equal(MetricNames.TlsCertExpiresInDays, finding.Chart);
            }
        }

        var urgent = _certificates.Server("urgent", days: 5);
        using (var server = StartWith(urgent))
        {
            var finding = DoctorProbe.Expect(server, "tls-certificate-expiry");
            Assert.Equal(FindingSeverity.Critical, finding.Severity);
            Assert.Equal("The TLS certificate expires in 4 days", finding.Title);
        }
    }

    [Fact]
    public void ARefusedRenewalIsNamedInTheFinding()
    {
        var soon = _certificates.Server("soon", days: 10);
        var (certFile, keyFile) = _certificates.Live(soon);
        using var server = StartWith(soon, certFile, keyFile);
        using var c = server.Connect();
        // The renewal's certificate arrives without its key: refused, the old pair stays.
        File.Copy(_certificates.Server("renewal", days: 90).CertFile, certFile, overwrite: true);
        Poll.Until(() => InfoFields.GetInt64(c, "tls", "tls_reload_failures") == 1, "the mismatched renewal is refused", timeoutMs: 20_000);

        var (live, offline) = LiveAndOffline.Expect(server, "tls-certificate-expiry");
        foreach (var finding in new[] { live, offline })
        {
            Assert.Equal(FindingSeverity.Warning, finding.Severity);
            Assert.Contains("The last certificate offered to replace it was refused", finding.Seen);
            Assert.Contains(certFile, finding.Evidence["tls_last_reload_error"]);
        }
    }
}
