using Diagnostics.Server.Tests.Infrastructure;
using OpenQA.Selenium;

namespace Diagnostics.Server.Tests.Studio;

/// <summary>
/// The studio over HTTPS (http-tls-port) in a real headless chromium that trusts the test's
/// certificate alone (pinned by its public key): the login, a Secure session cookie, and the
/// Security page showing the certificates the server is using.
/// </summary>
[Collection(QuietMachineCollection.Name)]
public sealed class HttpsBrowserTests : IDisposable
{
    private const string Password = "https-studio-password";
    private readonly TestCertificates _certificates = new();

    public void Dispose() => _certificates.Dispose();

    [Fact]
    public void TheStudioRunsOverHttpsAndShowsTheCertificatesInUse()
    {
        var web = _certificates.Server("studio-web", days: 20);
        var resp = _certificates.Server("resp", days: 200);
        int httpsPort = ServerProcess.FreePort();
        int tlsPort = ServerProcess.FreePort();
        using var server = ServerProcess.Start("--requirepass", Password, "--http-tls-port", httpsPort.ToString(),
            "--http-tls-cert-file", web.CertFile, "--http-tls-key-file", web.KeyFile,
            "--tls-port", tlsPort.ToString(), "--tls-cert-file", resp.CertFile, "--tls-key-file", resp.KeyFile, "--tls-auth-clients", "no");
        using (var client = RespClient.ConnectTls(tlsPort, _certificates.ClientOptions()))
            Assert.Equal("NOAUTH Authentication required.", client.Call("PING").Text);
        using var browser = new Browser(trustedKeyHashes: [web.PublicKeyHash]);
        string studio = $"https://localhost:{httpsPort}";

        browser.GoTo($"{studio}/security");
        var field = browser.WaitFor(d => d.FindElement(By.Id("secret")), "the login form over HTTPS");
        field.SendKeys(Password);
        browser.Driver.FindElement(By.CssSelector(".login-form button[type=submit]")).Click();
        browser.WaitFor(d => d.Url == $"{studio}/security", "the Security page after the login");
        browser.WaitForCircuit();
        var cookie = browser.Driver.Manage().Cookies.GetCookieNamed("diagnostics-studio");
        Assert.NotNull(cookie);
        Assert.True(cookie.Secure, "the session cookie of an HTTPS login is Secure");

        var http = browser.WaitFor(d => d.FindElement(By.CssSelector("section.certificate[data-listener='HTTPS']")), "the HTTPS certificate");
        Assert.Contains("CN=studio-web", http.Text);
        Assert.Contains("warn", http.FindElement(By.CssSelector(".tile")).GetDomAttribute("class"));
        Assert.Contains(web.SerialNumber, http.FindElement(By.CssSelector(".serial")).Text);
        var respSection = browser.Driver.FindElement(By.CssSelector("section.certificate[data-listener='RESP']"));
        Assert.Contains("CN=resp", respSection.Text);
        Assert.Contains($"(port {tlsPort})", respSection.Text);
        // The TLS client above is counted on the page.
        browser.WaitFor(d => d.FindElement(By.CssSelector(".tiles.handshakes")).Text.Contains("Handshakes\n1"), "the handshake counted");
        Assert.Equal(5, browser.WaitFor(d => d.FindElements(By.CssSelector(".charts .chart-host canvas")) is { Count: 5 } c ? c : null, "the five charts")!.Count);
        browser.Screenshot("security-https");
        browser.AssertNoConsoleErrors();
    }
}
