using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;
using OpenQA.Selenium;

namespace Diagnostics.Server.Tests.Studio;

/// <summary>
/// The Threads, Clients, Commands, Memory, Disk I/O and Doctor pages in a real headless chromium,
/// against a real server with the AOF on under redis-benchmark's traffic. Each page is saved as a
/// screenshot (TestResults/screenshots).
/// </summary>
[Collection(QuietMachineCollection.Name)]
public sealed class StudioPagesBrowserTests
{
    [Fact]
    public void ThreadAndClientTablesShowTheLoadAndAClientCanBeKilled()
    {
        using var server = ServerProcess.Start();
        using var load = new BackgroundLoad(server.Port, clients: 8);
        using var victim = server.Connect();
        RespAssert.Ok(victim.Call("CLIENT", "SETNAME", "studio-victim"));
        using var browser = new Browser();
        string studio = $"http://127.0.0.1:{server.HttpPort}/";

        browser.GoTo(studio + "threads");
        browser.WaitForCircuit();
        // The threads that ran the load's commands are in the table, and their CPU is drawn.
        var busy = browser.WaitFor(d => d.FindElements(By.CssSelector("table.threads tbody tr")).FirstOrDefault(r => CommandsOf(r) > 0), "a thread that ran the load's commands")!;
        string tid = busy.GetDomAttribute("data-tid")!;
        Assert.NotEmpty(busy.FindElements(By.CssSelector("svg.sparkline")));
        busy.FindElement(By.CssSelector("button.link")).Click();
        var detail = browser.WaitFor(d => d.FindElement(By.CssSelector(".detail")), "the thread's detail");
        Assert.Contains($"Thread {tid}", detail.FindElement(By.TagName("h2")).Text);
        Assert.Equal(3, browser.WaitFor(_ => detail.FindElements(By.CssSelector(".chart-host canvas")) is { Count: 3 } c ? c : null, "the thread's three charts")!.Count);
        browser.Screenshot("threads");

        browser.GoTo(studio + "clients");
        browser.WaitForCircuit();
        browser.WaitFor(d => d.FindElements(By.CssSelector("table.clients tbody tr")).Count >= 9, "redis-benchmark's 8 connections and the named one");
        browser.WaitFor(d => d.FindElements(By.CssSelector("table.clients tbody tr")).Count(r => r.Text.Contains("set") || r.Text.Contains("get")) >= 8, "the load's connections running SET and GET");
        browser.Screenshot("clients");
        var filter = browser.Driver.FindElement(By.Id("client-filter"));
        filter.SendKeys("studio-victim");
        var row = browser.WaitFor(d => d.FindElements(By.CssSelector("table.clients tbody tr")) is { Count: 1 } rows ? rows[0] : null, "the filter to leave the named client")!;
        row.FindElement(By.CssSelector("button.kill")).Click();
        browser.WaitFor(d => d.FindElement(By.CssSelector("button.confirm-kill")), "the confirmation").Click();
        var notice = browser.WaitFor(d => d.FindElement(By.CssSelector("p.notice")), "the kill's notice");
        Assert.Contains("was disconnected", notice.Text);

        // The connection really is closed: the next call finds it gone.
        Assert.ThrowsAny<IOException>(() => victim.Call("PING"));
        server.WaitForOutput("killed from the studio");
        browser.AssertNoConsoleErrors();
    }

    [Fact]
    public void CommandsMemoryDiskAndDoctorPagesShowTheServersFigures()
    {
        using var dir = new TempDirectory();
        using var server = ServerProcess.Start("--dir", dir.Path, "--appendonly", "yes", "--slowlog-log-slower-than", "10000");
        using (var c = server.Connect())
            RespAssert.Ok(c.Call("DEBUG", "SLEEP", "0.02"));
        using var load = new BackgroundLoad(server.Port, clients: 4);
        using (var api = new ApiClient(server.HttpPort))
            Poll.Until(() => api.Get("/api/history?seconds=60", ContractsJson.Default.MetricHistory).Times.Length >= 3, "three seconds of history");
        using var browser = new Browser();
        string studio = $"http://127.0.0.1:{server.HttpPort}/";

        browser.GoTo(studio + "commands");
        browser.WaitForCircuit();
        var set = browser.WaitFor(d => d.FindElement(By.CssSelector("table.commands tr[data-command='set']")), "SET in the command statistics");
        set.FindElement(By.CssSelector("button.link")).Click();
        var histogram = browser.WaitFor(d => d.FindElement(By.CssSelector(".histogram")), "SET's latency histogram");
        Assert.NotEmpty(histogram.FindElements(By.CssSelector("tbody tr")));
        Assert.Contains("DEBUG SLEEP 0.02", browser.Driver.FindElement(By.CssSelector("table.slowlog")).Text);
        browser.Screenshot("commands");

        browser.GoTo(studio + "memory");
        browser.WaitForCircuit();
        browser.WaitFor(d => d.FindElements(By.CssSelector("table.memory-threads tbody tr")).Count > 0, "tracked memory by thread");
        Assert.Contains("db0", browser.Driver.FindElement(By.CssSelector("table.databases")).Text);
        browser.WaitFor(d => d.FindElements(By.CssSelector(".chart-host canvas")).Count == 5, "the memory page's five charts");
        browser.Screenshot("memory");

        browser.GoTo(studio + "diskio");
        browser.WaitForCircuit();
        var accounting = browser.WaitFor(d => d.FindElement(By.CssSelector("table.diskio")), "the disk accounting table");
        Assert.Contains("aof_write", accounting.Text);
        Assert.Contains("aof_fsync", accounting.Text);
        Assert.Contains("Monitor not attached", browser.Driver.FindElement(By.CssSelector(".status-box")).Text);
        Assert.NotEmpty(browser.Driver.FindElements(By.CssSelector("table.kernel-io tbody tr")));
        browser.Screenshot("diskio");

        // From the dashboard's glance to the finding, its evidence and its chart.
        browser.GoTo(studio);
        browser.WaitForCircuit();
        browser.WaitFor(d => d.FindElement(By.CssSelector(".findings-glance a[href='doctor#finding-slow-commands']")), "the slow-commands finding at a glance").Click();
        var finding = browser.WaitFor(d => d.FindElement(By.Id("finding-slow-commands")), "the finding on the Doctor page");
        Assert.Contains("debug", finding.FindElement(By.CssSelector(".evidence")).Text);
        browser.WaitFor(_ => finding.FindElement(By.CssSelector(".chart-host canvas")), "the finding's chart");
        Assert.EndsWith("/doctor#finding-slow-commands", browser.Driver.Url);
        browser.Screenshot("doctor");
        browser.AssertNoConsoleErrors();
    }

    [Fact]
    public void ANarrowWindowFoldsTheNavigationAndKeepsTablesReadable()
    {
        using var server = ServerProcess.Start();
        using var browser = new Browser(width: 480, height: 900);
        browser.GoTo($"http://127.0.0.1:{server.HttpPort}/clients");
        browser.WaitForCircuit();
        var nav = browser.Driver.FindElement(By.CssSelector("nav.sidebar"));
        var main = browser.Driver.FindElement(By.Id("main"));
        // Folded: the navigation sits above the page, not beside it, and the page is never wider than the window.
        Assert.True(nav.Location.Y < main.Location.Y && main.Location.X < 20, $"nav at {nav.Location}, main at {main.Location}");
        browser.Screenshot("clients-narrow");
        long scrollWidth = (long)browser.Driver.ExecuteScript("return document.documentElement.scrollWidth")!;
        long innerWidth = (long)browser.Driver.ExecuteScript("return window.innerWidth")!;
        string widest = (string)browser.Driver.ExecuteScript(
            "return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth).map(e => e.tagName + '.' + e.className).slice(0, 5).join(', ')")!;
        Assert.True(scrollWidth <= innerWidth, $"the page is {scrollWidth} px wide in a {innerWidth} px window: {widest}");
    }

    private static long CommandsOf(IWebElement row)
    {
        var cells = row.FindElements(By.TagName("td"));
        return long.TryParse(cells[^2].Text.Replace(",", ""), out long n) ? n : 0;
    }
}
