using Diagnostics.Server.Tests.Infrastructure;
using OpenQA.Selenium;

namespace Diagnostics.Server.Tests.Studio;

/// <summary>
/// Bound beyond loopback, the studio asks for a login (the API key or requirepass) before it
/// shows anything, keeps the session in a cookie, and logs out.
/// </summary>
[Collection(QuietMachineCollection.Name)]
public sealed class LoginBrowserTests
{
    private const string ApiKey = "studio-test-key-5b8e";
    private const string Password = "studio-test-password";

    [Fact]
    public void ExposedStudioRequiresALoginAndKeepsTheSession()
    {
        using var server = ServerProcess.Start("--http-bind", "0.0.0.0", "--http-api-key", ApiKey, "--requirepass", Password);
        using var browser = new Browser();
        string studio = $"http://127.0.0.1:{server.HttpPort}";

        browser.GoTo($"{studio}/package");
        browser.WaitFor(d => d.Url.Contains("/login?returnUrl=%2Fpackage", StringComparison.Ordinal), "the redirect to the login page");
        Assert.Empty(browser.Driver.FindElements(By.CssSelector("nav a")));
        browser.Screenshot("login");

        LogIn(browser, "not-the-key");
        var error = browser.WaitFor(d => d.FindElement(By.CssSelector("[role=alert]")), "the refusal");
        Assert.Contains("not accepted", error.Text);
        Assert.Contains("/login", browser.Driver.Url);
        // The wrong secret counts as a failed authentication, charged to this address.
        using (var c = server.Connect())
        {
            RespAssert.Ok(c.Call("AUTH", Password));
            Assert.Equal(1, InfoFields.GetInt64(c, "stats", "http_auth_failures"));
        }

        LogIn(browser, ApiKey);
        browser.WaitFor(d => d.Url == $"{studio}/package", "the page asked for first");
        browser.WaitForCircuit();
        Assert.NotNull(browser.Driver.FindElement(By.LinkText("Download debug package")));
        // The session cookie opens the API too (the download link is a plain GET), and is HttpOnly.
        Assert.Contains("\"server\"", Fetch(browser, "/api/info"));
        var cookie = browser.Driver.Manage().Cookies.GetCookieNamed("diagnostics-studio");
        Assert.NotNull(cookie);
        Assert.True(cookie.IsHttpOnly);

        browser.Driver.FindElement(By.CssSelector(".logout button")).Click();
        browser.WaitFor(d => d.Url.EndsWith("/login", StringComparison.Ordinal), "the login page after logging out");
        browser.GoTo($"{studio}/");
        browser.WaitFor(d => d.Url.Contains("/login?returnUrl=", StringComparison.Ordinal), "the login page again");

        // requirepass works as well as the key.
        LogIn(browser, Password);
        browser.WaitFor(d => d.Url == $"{studio}/", "the dashboard");
        browser.WaitForCircuit();
        browser.AssertNoConsoleErrors();
    }

    [Fact]
    public void LoopbackStudioNeedsNoLogin()
    {
        using var server = ServerProcess.Start();
        using var browser = new Browser();
        browser.GoTo($"http://127.0.0.1:{server.HttpPort}/");
        browser.WaitForCircuit();
        Assert.Empty(browser.Driver.FindElements(By.CssSelector(".logout")));
        browser.GoTo($"http://127.0.0.1:{server.HttpPort}/login");
        Assert.Contains("needs no login", browser.Driver.FindElement(By.TagName("main")).Text);
    }

    private static void LogIn(Browser browser, string secret)
    {
        var field = browser.WaitFor(d => d.FindElement(By.Id("secret")), "the login form");
        field.SendKeys(secret);
        browser.Driver.FindElement(By.CssSelector(".login-form button[type=submit]")).Click();
    }

    private static string Fetch(Browser browser, string path) =>
        (string?)browser.Driver.ExecuteAsyncScript("const done = arguments[arguments.length - 1]; fetch(arguments[0]).then(r => r.text()).then(done, e => done(String(e)));", path) ?? "";
}
