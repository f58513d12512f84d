using Diagnostics.Server.Tests.Infrastructure;
using OpenQA.Selenium;

namespace Diagnostics.Server.Tests.Studio;

/// <summary>
/// The studio in chromium logged in as a read-only ACL user: it watches the dashboards and the
/// client list, but has no Kill button, sees no slow-log arguments, key names or ACL LOG, takes a
/// package without them, and the API refuses what the page does not offer. Its rules change over RESP and the
/// studio follows: a granted CLIENT KILL brings the button, a revoked INFO closes the open page, a
/// deleted user's session ends.
/// </summary>
[Collection(QuietMachineCollection.Name)]
public sealed class ReadOnlyUserBrowserTests
{
    private const string AdminPassword = "studio-admin-pw";
    private const string WatcherPassword = "studio-watch-pw";
    private const string SecretValue = "card-4111-1111";

    [Fact]
    public void AReadOnlyOperatorWatchesButCannotKillClientsOrReadValues()
    {
        using var server = ServerProcess.Start("--requirepass", AdminPassword, "--slowlog-log-slower-than", "0",
            "--user", $"watcher on >{WatcherPassword} +info +client|list");
        using var admin = server.Connect();
        RespAssert.Ok(admin.Call("AUTH", AdminPassword));
        RespAssert.Ok(admin.Call("SET", "customer:42", SecretValue));
        using var victim = server.Connect();
        RespAssert.Ok(victim.Call("AUTH", AdminPassword));
        RespAssert.Ok(victim.Call("CLIENT", "SETNAME", "studio-victim"));
        using var browser = new Browser();
        string studio = $"http://127.0.0.1:{server.HttpPort}/";

        browser.GoTo(studio + "clients");
        browser.WaitFor(d => d.Url.Contains("/login?returnUrl=%2Fclients", StringComparison.Ordinal), "the login page");
        browser.WaitFor(d => d.FindElement(By.Id("user")), "the user field").SendKeys("watcher");
        browser.Driver.FindElement(By.Id("secret")).SendKeys(WatcherPassword);
        browser.Driver.FindElement(By.CssSelector(".login-form button[type=submit]")).Click();
        browser.WaitFor(d => d.Url == studio + "clients", "the clients page after logging in");
        browser.WaitForCircuit();
        Assert.Equal("user 'watcher'", browser.Driver.FindElement(By.CssSelector(".login-name")).Text);

        // The client list, without a Kill button.
        browser.WaitFor(d => d.FindElements(By.CssSelector("table.clients tbody tr")).FirstOrDefault(r => r.Text.Contains("studio-victim")), "the named client");
        Assert.Empty(browser.Driver.FindElements(By.CssSelector("button.kill")));
        browser.Screenshot("read-only-clients");

        // The commands page: statistics yes, the slow log's arguments and the hot keys' names no.
        browser.GoTo(studio + "commands");
        browser.WaitForCircuit();
        var slowLog = browser.WaitFor(d => d.FindElement(By.CssSelector("p.refused[data-needs=slowlog]")), "the slow log's refusal");
        Assert.Contains("ACL SETUSER watcher +slowlog|get", slowLog.Text);
        Assert.Contains("+scan", browser.Driver.FindElement(By.CssSelector("p.refused[data-needs=keys]")).Text);
        Assert.NotEmpty(browser.Driver.FindElements(By.CssSelector("table.commands tbody tr")));
        Assert.DoesNotContain(SecretValue, browser.Driver.PageSource);
        Assert.DoesNotContain("customer:42", browser.Driver.PageSource);

        // No package, no ACL LOG; the TLS and failed-login figures stay.
        browser.GoTo(studio + "package");
        browser.WaitForCircuit();
        // The package: what the login may see, with a note saying what it leaves out; opened, the banner says so too.
        browser.WaitForText(By.CssSelector("#download-title ~ p.refused"), "+slowlog|get", "the note on what the package leaves out");
        browser.Driver.FindElement(By.LinkText("Download debug package")).Click();
        string zipPath = browser.WaitFor(_ => Directory.GetFiles(browser.Downloads, "diagnostics-*.zip").FirstOrDefault(), "the package download to finish", 60_000)!;
        using (var zip = System.IO.Compression.ZipFile.OpenRead(zipPath))
        {
            var manifest = global::Diagnostics.Doctor.PackageReader.ReadManifest(zip);
            Assert.Equal("user 'watcher'", manifest.TakenBy);
            Assert.Contains(manifest.Omitted, o => o.Name == "slowlog.json" && o.Rules == "+slowlog|get");
            Assert.Null(zip.GetEntry("slowlog.json"));
            Assert.NotNull(zip.GetEntry("clients.json")); // +client|list: the clients are its to see
            foreach (var entry in zip.Entries)
            {
                using var reader = new StreamReader(entry.Open());
                string text = reader.ReadToEnd();
                Assert.DoesNotContain(SecretValue, text);
                Assert.DoesNotContain("customer:42", text);
            }
        }
        browser.Driver.FindElement(By.Id("package-file")).SendKeys(zipPath);
        string partial = browser.WaitForText(By.CssSelector(".source.partial"), "user 'watcher'", "the partial package's banner");
        Assert.Contains("slowlog.json", partial);
        browser.Driver.FindElement(By.LinkText("the package's page")).Click();
        Assert.Contains("slowlog.json", browser.WaitForText(By.CssSelector("table.data tr.omitted"), "+slowlog|get", "the entry left out"));
        browser.GoTo(studio + "security");
        browser.WaitForCircuit();
        browser.WaitForText(By.CssSelector("p.refused[data-needs=acl-log]"), "+acl|log", "the ACL log's refusal");
        Assert.NotNull(browser.Driver.FindElement(By.CssSelector("section.certificate")));
        browser.AssertNoConsoleErrors();

        // What the page does not offer, the API refuses too, to the same session.
        long victimId = victim.Call("CLIENT", "ID").Integer;
        Assert.Equal("403", Post(browser, $"/api/clients/{victimId}/kill"));
        Assert.Equal("PONG", victim.Call("PING").Text);
        Assert.Equal("403", Get(browser, "/api/slowlog"));
        Assert.Equal("200", Get(browser, "/api/clients"));

        // Granted over RESP, the button is there on the next load, and it works.
        RespAssert.Ok(admin.Call("ACL", "SETUSER", "watcher", "+client|kill"));
        browser.GoTo(studio + "clients");
        browser.WaitForCircuit();
        browser.Driver.FindElement(By.Id("client-filter")).SendKeys("studio-victim");
        var row = browser.WaitFor(d => d.FindElements(By.CssSelector("table.clients tbody tr")) is { Count: 1 } rows ? rows[0] : null, "the named client alone")!;
        row.FindElement(By.CssSelector("button.kill")).Click();
        browser.WaitFor(d => d.FindElement(By.CssSelector("button.confirm-kill")), "the confirmation").Click();
        browser.WaitForText(By.CssSelector("p.notice"), "was disconnected", "the kill's notice");
        Assert.ThrowsAny<IOException>(() => victim.Call("PING"));

        // Without INFO the login watches nothing: the open page notices on its next tick and says so.
        RespAssert.Ok(admin.Call("ACL", "SETUSER", "watcher", "-info"));
        browser.WaitForText(By.CssSelector("main p.error"), "ACL SETUSER watcher +info", "the open page's refusal");
        Assert.Empty(browser.Driver.FindElements(By.CssSelector("table.clients")));
        // Deleted, it is logged out.
        RespAssert.Integer(1, admin.Call("ACL", "DELUSER", "watcher"));
        browser.GoTo(studio + "clients");
        browser.WaitFor(d => d.Url.Contains("/login?returnUrl=%2Fclients", StringComparison.Ordinal), "the login page once the user is gone");

        // Each refusal is in ACL LOG under the user, from the studio's context.
        var refused = admin.Call("ACL", "LOG").Items!.Select(e => e.ToMap()).Where(e => e["context"].Text == "http").Select(e => e["object"].Text).ToList();
        Assert.Contains("client|kill", refused);
        Assert.Contains("slowlog|get", refused);
    }

    private static string Get(Browser browser, string path) =>
        (string?)browser.Driver.ExecuteAsyncScript("const done = arguments[arguments.length - 1]; fetch(arguments[0]).then(r => done(String(r.status)), e => done(String(e)));", path) ?? "";

    private static string Post(Browser browser, string path) =>
        (string?)browser.Driver.ExecuteAsyncScript("const done = arguments[arguments.length - 1]; fetch(arguments[0], { method: 'POST' }).then(r => done(String(r.status)), e => done(String(e)));", path) ?? "";
}
