using System.IO.Compression;
using Diagnostics.Contracts;
using Diagnostics.Doctor;
using Diagnostics.Server.Tests.Infrastructure;
using OpenQA.Selenium;

namespace Diagnostics.Server.Tests.Studio;

/// <summary>
/// The debug package through the studio, in a real headless chromium: the page's button downloads
/// a zip whose manifest lists its entries; uploading that zip renders the offline view, with the
/// banner naming the host and the time, and the doctor's rules run over it.
/// </summary>
[Collection(QuietMachineCollection.Name)]
public sealed class PackageBrowserTests
{
    [Fact]
    public void DownloadedPackageOpensOfflineWithItsBanner()
    {
        using var server = ServerProcess.Start();
        using (var load = new BackgroundLoad(server.Port))
        {
            using var api = new ApiClient(server.HttpPort);
            Poll.Until(() => api.Get("/api/history?seconds=60", ContractsJson.Default.MetricHistory).Times.Length >= 3, "three seconds of history under load");
        }
        using var browser = new Browser();
        browser.GoTo($"http://127.0.0.1:{server.HttpPort}/package");
        browser.WaitForCircuit();
        browser.Driver.FindElement(By.LinkText("Download debug package")).Click();
        string zipPath = browser.WaitFor(_ => Directory.GetFiles(browser.Downloads, "diagnostics-*.zip").FirstOrDefault(), "the package download to finish", 60_000)!;

        PackageManifest manifest;
        using (var zip = ZipFile.OpenRead(zipPath))
        {
            manifest = PackageReader.ReadManifest(zip);
            foreach (string name in (string[])["info.json", "history.json", "threads.json", "clients.json", "commands.json", "doctor.json", "stacks.txt"])
                Assert.Contains(manifest.Entries, e => e.Name == name && e.Error is null);
            foreach (var entry in manifest.Entries)
                Assert.NotNull(zip.GetEntry(entry.Name));
        }
        Assert.Equal(server.Pid, manifest.ProcessId);

        var upload = browser.Driver.FindElement(By.Id("package-file"));
        upload.SendKeys(zipPath);
        var banner = browser.WaitFor(d => d.FindElement(By.CssSelector(".source.offline")), "the offline banner");
        Assert.Contains(manifest.Host, banner.Text);
        Assert.Contains(manifest.TakenAt.UtcDateTime.ToString("yyyy-MM-dd HH:mm:ss", System.Globalization.CultureInfo.InvariantCulture), banner.Text);
        Assert.Contains($"pid {server.Pid}", banner.Text);
        Assert.Matches("/package/[0-9a-f]{24}$", browser.Driver.Url);

        // The offline dashboard: the package's history drawn, the doctor's rules run over it, and
        // links that stay on the package.
        var ops = browser.WaitFor(d => d.FindElement(By.CssSelector(".chart-host[data-points]")), "the offline charts");
        Assert.True(ops.NumberAttribute("data-points") >= 3, "the package's history is drawn");
        Assert.Contains("Data is not persisted", browser.Driver.FindElement(By.CssSelector(".glance")).Text);
        Assert.Empty(browser.Driver.FindElements(By.CssSelector(".window-controls .pause")));
        browser.Screenshot("offline-dashboard");
        string prefix = new Uri(browser.Driver.Url).AbsolutePath.TrimStart('/') + "/";
        foreach (var link in browser.Driver.FindElements(By.CssSelector("nav a")))
            Assert.StartsWith(prefix, link.GetDomAttribute("href"));

        // Every page renders the package offline, under the banner, without failing.
        foreach (string page in (string[])["Threads", "Clients", "Commands", "Memory", "Disk I/O", "Replication", "Doctor"])
        {
            browser.Driver.FindElement(By.LinkText(page)).Click();
            browser.WaitFor(d => d.FindElement(By.TagName("h1")).Text == page, $"the offline {page} page");
            Assert.Empty(browser.Driver.FindElements(By.XPath("//h1[text()='This page failed']")));
            Assert.NotNull(browser.Driver.FindElement(By.CssSelector(".source.offline")));
            browser.Screenshot("offline-" + page.Replace("/", "").Replace(' ', '-').ToLowerInvariant());
        }
        Assert.Contains("Data is not persisted", browser.Driver.FindElement(By.Id("finding-no-persistence")).Text);

        browser.Driver.FindElement(By.LinkText("Debug package")).Click();
        var entries = browser.WaitFor(d => d.FindElement(By.CssSelector("table.data")), "the package's entry table");
        foreach (var entry in manifest.Entries)
            Assert.Contains(entry.Name, entries.Text);
        Assert.NotNull(browser.Driver.FindElement(By.CssSelector(".source.offline")));
        browser.Screenshot("offline-package");
        browser.AssertNoConsoleErrors();
    }

    [Fact]
    public void APackageATriggerTookIsListedAndOpensOffline()
    {
        using var dir = new TempDirectory();
        using var server = ServerProcess.Start("--dir", dir.Path, "--package-trigger-severity", "off", "--package-trigger-metrics", "connected_clients 0 1");
        using var api = new ApiClient(server.HttpPort);
        using (server.Connect())
            Poll.Until(() => api.Get("/api/debug/packages", ContractsJson.Default.TriggerReport).Taken == 1, "a triggered package", 20_000);
        var package = api.Get("/api/debug/packages", ContractsJson.Default.TriggerReport).Packages.Single();

        using var browser = new Browser();
        browser.GoTo($"http://127.0.0.1:{server.HttpPort}/package");
        browser.WaitForCircuit();
        // The list is read again every second: each look and the click are retried if the row was redrawn.
        const string Row = "section[aria-labelledby=triggered-title] tbody tr";
        string rowText = browser.WaitFor(d => d.FindElement(By.CssSelector(Row)).Text, "the triggered package's row");
        Assert.Contains(package.Reason, rowText);
        Assert.Contains(package.Name, rowText);
        browser.WaitFor(d =>
        {
            d.FindElement(By.CssSelector(Row + " button")).Click();
            return true;
        }, "a click on Open");
        // Texts are read inside the waits: the prerendered page is redrawn once its circuit starts.
        string banner = browser.WaitFor(d => d.FindElement(By.CssSelector(".source.offline")).Text, "the offline banner");
        Assert.Contains($"pid {server.Pid}", banner);
        Assert.Matches("/package/[0-9a-f]{24}$", browser.Driver.Url);
        browser.GoTo(browser.Driver.Url + "/package");
        string contents = browser.WaitFor(d => d.FindElement(By.CssSelector("section[aria-labelledby=contents-title]")).Text, "the opened package's contents");
        Assert.Contains("Taken automatically by the server: " + package.Reason, contents);
    }

    [Fact]
    public void AFileThatIsNotAPackageIsRefusedWithAReason()
    {
        using var server = ServerProcess.Start();
        using var files = new TempDirectory();
        string notAZip = files.File("notes.zip");
        File.WriteAllText(notAZip, "these are not the bytes of a zip file");
        using var browser = new Browser();
        browser.GoTo($"http://127.0.0.1:{server.HttpPort}/package");
        browser.WaitForCircuit();
        browser.Driver.FindElement(By.Id("package-file")).SendKeys(notAZip);
        var error = browser.WaitFor(d => d.FindElement(By.CssSelector("[role=alert]")), "the error");
        Assert.Contains("notes.zip is not a zip file", error.Text);
        Assert.Contains("/package", browser.Driver.Url);
        Assert.Empty(browser.Driver.FindElements(By.CssSelector(".source.offline")));
    }

    [Fact]
    public void APackageOverALimitIsRefusedOnThePageNamingTheLimit()
    {
        using var server = ServerProcess.Start();
        using var files = new TempDirectory();
        string huge = files.File("huge.zip");
        File.WriteAllBytes(huge, HostilePackages.OneHugeEntry("log.txt", 40L * 1024 * 1024));
        using var browser = new Browser();
        browser.GoTo($"http://127.0.0.1:{server.HttpPort}/package");
        browser.WaitForCircuit();
        browser.Driver.FindElement(By.Id("package-file")).SendKeys(huge);
        var error = browser.WaitFor(d => d.FindElement(By.CssSelector("[role=alert]")), "the error", 30_000);
        Assert.Contains("huge.zip: log.txt unpacks to more than 32 MB", error.Text);
        Assert.Contains("studio-package-max-entry", error.Text);
        Assert.Empty(browser.Driver.FindElements(By.CssSelector(".source.offline")));
        browser.Screenshot("package-refused");
    }
}
