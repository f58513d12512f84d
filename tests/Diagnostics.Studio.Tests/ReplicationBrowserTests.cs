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
    public void TheMasterPageShowsTheReplicaRowAndItsLagCharts()
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
        Assert.Contains($"127.0.0.1:{pair.Master.Port}", link.Text);
        Assert.Contains("connected", link.Text);
        browser.Screenshot("replication-replica");
        browser.AssertNoConsoleErrors();
    }
}
