using OpenQA.Selenium;
using Diagnostics.Testing;
using OpenQA.Selenium.Chrome;
using OpenQA.Selenium.Support.UI;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// A real headless browser for a test (<see cref="HeadlessChromium"/>): a fresh profile and
/// download folder each, waits, screenshots as artifacts, and the console's errors as failures.
/// Missing packages fail the test with the command that installs them.
/// </summary>
public sealed class Browser : IDisposable
{
    private readonly TempDirectory _profile = new();

    /// <param name="trustedKeyHashes">Public-key hashes of the test's own HTTPS certificates (see <see cref="HeadlessChromium.Start"/>).</param>
    public Browser(int width = 1280, int height = 1000, IReadOnlyList<string>? trustedKeyHashes = null)
    {
        if (HeadlessChromium.Missing() is { } missing)
            Assert.Fail($"the browser tests need {missing}");
        Downloads = Path.Combine(_profile.Path, "downloads");
        Directory.CreateDirectory(Downloads);
        Driver = HeadlessChromium.Start(Path.Combine(_profile.Path, "profile"), Downloads, width, height, trustedKeyHashes);
    }

    public ChromeDriver Driver { get; }

    /// <summary>Where the browser saves downloads, without asking.</summary>
    public string Downloads { get; }

    public void GoTo(string url) => Driver.Navigate().GoToUrl(url);

    /// <summary>Waits until the condition holds (Selenium's own polling), failing with <paramref name="what"/> after the timeout.</summary>
    public T WaitFor<T>(Func<IWebDriver, T> condition, string what, int timeoutMs = 20_000)
    {
        var wait = new WebDriverWait(Driver, TimeSpan.FromMilliseconds(timeoutMs)) { Message = $"timed out waiting for {what}" };
        wait.IgnoreExceptionTypes(typeof(NoSuchElementException), typeof(StaleElementReferenceException));
        return wait.Until(condition);
    }

    /// <summary>
    /// Waits until an element the selector finds holds <paramref name="text"/>, and returns its whole text. The text is read
    /// inside the wait: a page that re-renders (or reloads itself) between finding an element and reading it only makes
    /// the wait look again, where reading it afterwards would fail on a stale element.
    /// </summary>
    public string WaitForText(By selector, string text, string what, int timeoutMs = 20_000)
    {
        string? last = null;
        try
        {
            return WaitFor(d => (last = d.FindElement(selector).Text).Contains(text, StringComparison.Ordinal) ? last : null, what, timeoutMs)!;
        }
        catch (WebDriverTimeoutException) when (last is not null)
        {
            Assert.Fail($"timed out waiting for {what}: expected \"{text}\" in \"{last}\"");
            throw;
        }
    }

    /// <summary>Waits until the studio's circuit is up (the layout renders interactively): the page answers clicks from then on.</summary>
    public void WaitForCircuit() =>
        WaitFor(d => d.FindElement(By.CssSelector(".studio[data-interactive='true']")), "the studio's Blazor circuit");

    /// <summary>Saves a screenshot of the page as a test artifact (TestResults/screenshots/NAME.png) and returns its path.</summary>
    public string Screenshot(string name)
    {
        string folder = Path.Combine(AppContext.BaseDirectory, "TestResults", "screenshots");
        Directory.CreateDirectory(folder);
        string path = Path.Combine(folder, name + ".png");
        Driver.GetScreenshot().SaveAsFile(path);
        return path;
    }

    /// <summary>Fails with every console error the pages logged so far: a failing script or a missing file is a failing test.</summary>
    public void AssertNoConsoleErrors()
    {
        var errors = new List<string>();
        foreach (var entry in Driver.Manage().Logs.GetLog(LogType.Browser))
        {
            if (entry.Level >= LogLevel.Severe)
                errors.Add(entry.Message);
        }
        Assert.True(errors.Count == 0, "the browser's console logged errors:\n" + string.Join('\n', errors));
    }

    public void Dispose()
    {
        try
        {
            Driver.Quit();
        }
        finally
        {
            Driver.Dispose();
            _profile.Dispose();
        }
    }
}
