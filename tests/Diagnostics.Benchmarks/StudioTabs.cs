using System.Globalization;
using Diagnostics.Testing;
using OpenQA.Selenium;
using OpenQA.Selenium.Chrome;
using OpenQA.Selenium.Support.UI;

namespace Diagnostics.Benchmarks;

/// <summary>Main-thread time of one dashboard tab per second of wall time, in milliseconds (from Chrome's Performance domain).</summary>
public sealed record BrowserCost(double TaskMillisPerSecond, double ScriptMillisPerSecond, double LayoutAndStyleMillisPerSecond);

/// <summary>
/// A real headless chromium with some windows on the studio's dashboard, opened and closed on
/// demand. Each is a separate window rather than a background tab: headless Chrome throttles no
/// visible window, so every one draws every tick, as a tab someone is looking at would.
/// </summary>
public sealed class StudioTabs : IDisposable
{
    private readonly ScratchDirectory _profile = ScratchDirectory.Create("studio-browser-");
    private readonly ChromeDriver _driver;
    private readonly string _dashboard;
    private readonly string _blank;
    private readonly List<string> _open = [];

    public StudioTabs(int httpPort)
    {
        if (HeadlessChromium.Missing() is { } missing)
            throw new HarnessException($"the studio suite needs {missing}");
        _driver = HeadlessChromium.Start(_profile.Path);
        _blank = _driver.CurrentWindowHandle;
        _dashboard = $"http://127.0.0.1:{httpPort}/";
        BrowserVersion = _driver.Capabilities.GetCapability("browserVersion")?.ToString() ?? "unknown";
    }

    public string BrowserVersion { get; }

    /// <summary>Opens <paramref name="count"/> windows on the dashboard and waits until every chart in each is live.</summary>
    public void Open(int count)
    {
        for (int i = 0; i < count; i++)
        {
            _driver.SwitchTo().NewWindow(WindowType.Window);
            _open.Add(_driver.CurrentWindowHandle);
            _driver.Navigate().GoToUrl(_dashboard);
            var wait = new WebDriverWait(_driver, TimeSpan.FromSeconds(30)) { Message = "the dashboard's charts to draw" };
            wait.IgnoreExceptionTypes(typeof(NoSuchElementException));
            wait.Until(d => d.FindElement(By.CssSelector(".studio[data-interactive='true']")) is not null
                && d.FindElements(By.CssSelector(".chart-host canvas")).Count >= 10);
            _driver.ExecuteCdpCommand("Performance.enable", []);
        }
    }

    /// <summary>Closes every dashboard window (their circuits end with them).</summary>
    public void CloseAll()
    {
        foreach (string handle in _open)
        {
            _driver.SwitchTo().Window(handle);
            _driver.Close();
        }
        _open.Clear();
        _driver.SwitchTo().Window(_blank);
    }

    /// <summary>The Performance domain's cumulative durations (seconds) of each open window, in order.</summary>
    public List<(double Task, double Script, double LayoutAndStyle)> ReadDurations()
    {
        var result = new List<(double, double, double)>(_open.Count);
        foreach (string handle in _open)
        {
            _driver.SwitchTo().Window(handle);
            var reply = _driver.ExecuteCdpCommand("Performance.getMetrics", []) as Dictionary<string, object>
                ?? throw new HarnessException("chromium answered Performance.getMetrics with nothing");
            double task = 0, script = 0, layout = 0;
            foreach (var metric in (IEnumerable<object>)reply["metrics"])
            {
                var m = (Dictionary<string, object>)metric;
                double value = Convert.ToDouble(m["value"], CultureInfo.InvariantCulture);
                switch ((string)m["name"])
                {
                    case "TaskDuration": task = value; break;
                    case "ScriptDuration": script = value; break;
                    case "LayoutDuration" or "RecalcStyleDuration": layout += value; break;
                }
            }
            result.Add((task, script, layout));
        }
        return result;
    }

    /// <summary>
    /// CPU time of the whole browser so far: chromedriver and every process it started (the
    /// browser process, one renderer per window, GPU and utility processes), living ones only.
    /// </summary>
    public TimeSpan BrowserCpuTime() => ProcStat.TreeCpuTime(Environment.ProcessId, "chromedriver");

    /// <summary>Each window's main-thread time per second between two readings.</summary>
    public static List<BrowserCost> Costs(List<(double Task, double Script, double LayoutAndStyle)> before, List<(double Task, double Script, double LayoutAndStyle)> after, double seconds)
    {
        var costs = new List<BrowserCost>(before.Count);
        for (int i = 0; i < before.Count; i++)
        {
            costs.Add(new BrowserCost(
                (after[i].Task - before[i].Task) * 1000 / seconds,
                (after[i].Script - before[i].Script) * 1000 / seconds,
                (after[i].LayoutAndStyle - before[i].LayoutAndStyle) * 1000 / seconds));
        }
        return costs;
    }

    public void Dispose()
    {
        try
        {
            _driver.Quit();
        }
        finally
        {
            _driver.Dispose();
            _profile.Dispose();
        }
    }
}
