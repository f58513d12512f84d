using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;
using OpenQA.Selenium;

namespace Diagnostics.Server.Tests.Studio;

/// <summary>
/// The Replication page in a real headless chromium, on a master of ours with a replica of ours:
/// the replica's row with its offsets, and its lag charts drawn from the history.
/// </summary>
[Collection(QuietMachineCollection.Name)]
public sealed class ReplicationBrowserTests
{
    [Fact]
    public async Task TheMasterPageShowsTheReplicaRowAndItsLagChartsLiveAndFromAPackage()
    {
        using var pair = ReplicaPair.Start([]);
        using (var m = pair.Master.Connect())
        {
            for (int i = 0; i < 100; i++)
                RespAssert.Ok(m.Call("SET", "k" + i, "v"));
        }
        pair.WaitInSync();
        using (var api = new ApiClient(pair.Master.HttpPort))
            Poll.Until(() => api.Get("/api/history?seconds=60", ContractsJson.Default.MetricHistory).Series.ContainsKey(MetricNames.ReplLagBytesPrefix + pair.ReplicaKey),
                "the replica's series in the history");
        using var browser = new Browser();
        browser.GoTo($"http://127.0.0.1:{pair.Master.HttpPort}/replication");
        browser.WaitForCircuit();

        var row = browser.WaitFor(d => d.FindElement(By.CssSelector($"table.replicas tr[data-replica='{pair.ReplicaKey}']")), "the replica's row");
        Assert.Contains("online", row.Text);
        var figures = browser.WaitFor(d => d.FindElements(By.CssSelector(".chart")).FirstOrDefault(f => f.Text.Contains("Replica lag (bytes)")), "the lag chart")!;
        browser.WaitFor(_ => figures.FindElement(By.CssSelector(".chart-host canvas")), "the lag chart drawn");
        Assert.Contains(pair.ReplicaKey, figures.Text); // its legend names the replica
        Assert.Contains("Replication", browser.Driver.FindElement(By.CssSelector("nav.sidebar")).Text);
        Assert.Contains("served", browser.Driver.FindElement(By.CssSelector("table.syncs")).Text);
        browser.Screenshot("replication");

        // The replica's page shows its link.
        browser.GoTo($"http://127.0.0.1:{pair.Replica.HttpPort}/replication");
        browser.WaitForCircuit();
        var link = browser.WaitFor(d => d.FindElement(By.CssSelector(".tiles.link")), "the replica's link");
        Assert.Equal($"127.0.0.1:{pair.Master.Port}", browser.Driver.FindElement(By.CssSelector(".master-address")).Text);
        Assert.Contains("connected", link.Text);
        browser.Screenshot("replication-replica");

        // The master's debug package, opened offline: the same row and chart from replication.json and history.json.
        using var dir = new TempDirectory();
        string zipPath = Path.Combine(dir.Path, "master.zip");
        using (var api = new ApiClient(pair.Master.HttpPort))
            await File.WriteAllBytesAsync(zipPath, await api.Http.GetByteArrayAsync("/api/debug/package"));
        browser.GoTo($"http://127.0.0.1:{pair.Master.HttpPort}/package");
        browser.WaitForCircuit();
        browser.Driver.FindElement(By.Id("package-file")).SendKeys(zipPath);
        browser.WaitFor(d => d.FindElement(By.CssSelector(".source.offline")), "the offline banner");
        string packagePath = browser.WaitFor(d => System.Text.RegularExpressions.Regex.Match(d.Url, "/package/[0-9a-f]{24}").Value is { Length: > 0 } path ? path : null, "the package's address")!;
        // Its own address (the navigation's links to it are clicked through in PackageBrowserTests).
        browser.GoTo($"http://127.0.0.1:{pair.Master.HttpPort}{packagePath}/replication");
        browser.WaitForCircuit();
        browser.WaitFor(d => d.FindElement(By.TagName("h1")).Text == "Replication", "the offline Replication page");
        Assert.NotNull(browser.Driver.FindElement(By.CssSelector(".source.offline")));
        Assert.Matches("/package/[0-9a-f]{24}/replication$", browser.Driver.Url);
        var offlineRow = browser.WaitFor(d => d.FindElement(By.CssSelector($"table.replicas tr[data-replica='{pair.ReplicaKey}']")), "the replica's row offline");
        Assert.Contains("online", offlineRow.Text);
        var offlineChart = browser.WaitFor(d => d.FindElements(By.CssSelector(".chart")).FirstOrDefault(f => f.Text.Contains("Replica lag (bytes)")), "the offline lag chart")!;
        browser.WaitFor(_ => offlineChart.FindElement(By.CssSelector(".chart-host canvas")), "the offline lag chart drawn");
        browser.Screenshot("replication-offline");
        browser.AssertNoConsoleErrors();
    }
}
