using Bunit;
using Diagnostics.Contracts;
using Diagnostics.Studio.Security;
using Diagnostics.Studio.Charts;
using SecurityPage = Diagnostics.Studio.Pages.Security;

namespace Diagnostics.Server.Tests.Studio;

/// <summary>The Security page with fixed INFO tls figures: both certificates, the expiry as the doctor grades it, the handshakes by outcome.</summary>
public sealed class SecurityComponentTests
{
    private static Dictionary<string, string> Tls(long respExpiresIn, long httpExpiresIn) => new()
    {
        ["tls_enabled"] = "1", ["tls_port"] = "6380", ["tls_auth_clients"] = "yes",
        ["tls_protocols"] = "TLSv1.2 TLSv1.3", ["tls_cert_subject"] = "CN=db1", ["tls_cert_issuer"] = "CN=Corp CA",
        ["tls_cert_serial"] = "3A01", ["tls_cert_sha256"] = "AB12", ["tls_cert_not_after"] = "1798000000",
        ["tls_cert_expires_in_seconds"] = respExpiresIn.ToString(), ["tls_loaded_at"] = "1795000000",
        ["tls_reloads"] = "2", ["tls_reload_failures"] = "1",
        ["tls_last_reload_error"] = "tls-cert-file /etc/tls/db1.crt: the certificate CN=db1 expired on 2026-11-30T00:00:00Z",
        ["http_tls_enabled"] = "1", ["http_tls_port"] = "8443", ["http_tls_cert_subject"] = "CN=studio",
        ["http_tls_cert_expires_in_seconds"] = httpExpiresIn.ToString(), ["http_tls_cert_not_after"] = "1799000000",
        ["http_tls_reloads"] = "0", ["http_tls_reload_failures"] = "0", ["http_tls_last_reload_error"] = "",
        ["tls_connected_clients"] = "12", ["tls_handshakes"] = "340", ["tls_handshake_usec_per_call"] = "2100",
        ["tls_handshake_failures_plaintext"] = "3", ["tls_handshake_failures_timeout"] = "0", ["tls_handshake_failures_closed"] = "0",
        ["tls_handshake_failures_client_certificate"] = "5", ["tls_handshake_failures_protocol"] = "0",
    };

    [Fact]
    public void BothCertificatesAreShownWithTheirExpiryGradedAsTheDoctorDoes()
    {
        var source = new FixedStudioSource
        {
            InfoReport = new InfoReport(new()
            {
                ["tls"] = Tls(respExpiresIn: 5 * 86_400, httpExpiresIn: 20 * 86_400),
                ["acl"] = new()
                {
                    ["acl_users"] = "3", ["acl_log_entries"] = "7", ["auth_failure_sources"] = "2",
                    ["auth_failure_source_0"] = "addr=10.0.0.9,user=admin,count=212,first=1795000000,last=1795000600",
                    ["auth_failure_source_1"] = "addr=10.0.0.5,user=app,count=2,first=1795000100,last=1795000200",
                },
            }),
            HistoryData = FixedStudioSource.MakeHistory(5, (MetricNames.TlsHandshakesPerSecond, i => i), (MetricNames.TlsCertExpiresInDays, _ => 5)),
        };
        using var context = StudioRendering.Context(source);
        var page = context.Render<SecurityPage>(source);

        var resp = page.Find("section.certificate[data-listener='RESP']");
        Assert.Contains("(port 6380)", resp.TextContent);
        Assert.Contains("CN=db1", resp.TextContent);
        Assert.Contains("in 5 days", resp.QuerySelector(".expiry")!.TextContent);
        Assert.Contains("critical", resp.QuerySelector(".tile")!.ClassName);
        Assert.Contains("2 (1)", resp.TextContent);
        Assert.Contains("expired on 2026-11-30", resp.QuerySelector(".reload-error")!.TextContent);

        var http = page.Find("section.certificate[data-listener='HTTPS']");
        Assert.Contains("CN=studio", http.TextContent);
        Assert.Contains("warn", http.QuerySelector(".tile")!.ClassName);
        Assert.Null(http.QuerySelector(".reload-error"));

        Assert.Contains("warn", page.Find("table.handshake-failures tr[data-reason='client_certificate']").ClassName);
        Assert.Contains("5", page.Find("table.handshake-failures tr[data-reason='client_certificate']").TextContent);
        Assert.Null(page.Find("table.handshake-failures tr[data-reason='timeout']").GetAttribute("class"));
        Assert.Contains("12", page.Find(".tiles.handshakes").TextContent);

        var failures = page.FindAll("table.auth-failures tbody tr");
        Assert.Equal(["10.0.0.9", "10.0.0.5"], failures.Select(r => r.GetAttribute("data-address")));
        Assert.Contains("admin", failures[0].TextContent);
        Assert.Contains("212", failures[0].TextContent);
        Assert.Contains("3 ACL users", page.Markup);

        var charts = page.FindComponents<TimeChart>();
        Assert.Contains(charts, c => c.Instance.Title == "TLS handshakes" && c.Instance.Unit == ChartUnit.OpsPerSecond);
        Assert.Contains(charts, c => c.Instance.Title == "Days until a certificate expires");
        Assert.Contains(charts, c => c.Instance.Title == "Calls refused by ACL rules" && c.Instance.Series.Single().Metric == MetricNames.AclDeniedPerSecond);
    }

    [Fact]
    public void AServerWithoutTlsSaysSoAndAnOldPackageHasNoFigures()
    {
        var off = new FixedStudioSource
        {
            InfoReport = new InfoReport(new()
            {
                ["tls"] = new() { ["tls_enabled"] = "0", ["tls_port"] = "0", ["http_tls_enabled"] = "0", ["http_tls_port"] = "0" },
                ["acl"] = new() { ["acl_users"] = "1", ["acl_log_entries"] = "0", ["auth_failure_sources"] = "0" },
            }),
        };
        using (var context = StudioRendering.Context(off))
        {
            var page = context.Render<SecurityPage>(off);
            Assert.Contains("Off: no tls-port is set.", page.Find("section.certificate[data-listener='RESP']").TextContent);
            Assert.Contains("Off: no http-tls-port is set.", page.Find("section.certificate[data-listener='HTTPS']").TextContent);
            Assert.Empty(page.FindAll("table.handshake-failures"));
            Assert.NotNull(page.Find(".no-failures"));
        }
        var old = new FixedStudioSource();
        using (var context = StudioRendering.Context(old))
            Assert.Contains("predates them", context.Render<SecurityPage>(old).Markup);
    }

    [Fact]
    public void AclLogIsShownToALoginThatMayReadItAndRefusedToOneThatMayNot()
    {
        var source = new FixedStudioSource
        {
            InfoReport = new InfoReport(new() { ["acl"] = new() { ["acl_users"] = "2", ["acl_log_entries"] = "2", ["auth_failure_sources"] = "0" } }),
            AclLogRecords =
            [
                new AclLogRecord(3, "auth", "http", "login", "admin", "addr=10.0.0.9:50111 laddr=10.0.0.1:8080 http=POST /login", 1795000000000, 1795000060000),
                new AclLogRecord(1, "command", "toplevel", "flushall", "app", "id=7 addr=10.0.0.5:41000 laddr=10.0.0.1:6379 fd=9 name=worker", 1795000100000, 1795000100000),
            ],
        };
        using (var context = StudioRendering.Context(source))
        {
            var page = context.Render<SecurityPage>(source);
            var rows = page.FindAll("table.acl-log tbody tr");
            Assert.Equal(2, rows.Count);
            Assert.Equal("auth", rows[0].GetAttribute("data-reason"));
            Assert.Contains("warn", rows[0].ClassName);
            Assert.Contains("http=POST /login", rows[0].TextContent);
            Assert.Equal("app", rows[1].GetAttribute("data-user"));
            Assert.Contains("flushall", rows[1].TextContent);
        }
        var watcher = new FixedStudioAccess { Current = new("user 'watcher'", "watcher", StudioPermissions.Watch) };
        using (var context = StudioRendering.Context(source, watcher))
        {
            var page = context.Render<SecurityPage>(source);
            Assert.Empty(page.FindAll("table.acl-log"));
            var refused = page.Find("p.refused[data-needs='acl-log']");
            Assert.Equal("The ACL user 'watcher' may not see the ACL log: that needs +acl|log (ACL SETUSER watcher +acl|log).", refused.TextContent);
            Assert.DoesNotContain("flushall", page.Markup);
        }
        var key = new FixedStudioAccess { Current = new("the API key", null, StudioPermissions.Watch) };
        using (var context = StudioRendering.Context(source, key))
            Assert.Equal("The API key's scope (http-api-key-scope) does not include acl-log, needed to see the ACL log.",
                context.Render<SecurityPage>(source).Find("p.refused").TextContent);
    }
}
