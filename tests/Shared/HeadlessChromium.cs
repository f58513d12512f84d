using OpenQA.Selenium.Chrome;

namespace Diagnostics.Testing;

/// <summary>
/// How the tests and the benchmark harness start a real browser: Debian's chromium driven by
/// Debian's chromedriver (the packages always match versions), headless, with the switches this
/// machine's closed network needs (no background requests to Google's services), a fresh profile
/// and downloads saved without asking. Shared as a linked source file by both projects.
/// </summary>
public static class HeadlessChromium
{
    public const string ChromiumPath = "/usr/bin/chromium";
    public const string ChromeDriverPath = "/usr/bin/chromedriver";
    public const string InstallHint = "sudo apt-get install -y chromium chromium-driver";

    /// <summary>Null when both programs are installed, else what is missing and how to install it.</summary>
    public static string? Missing() =>
        File.Exists(ChromiumPath) && File.Exists(ChromeDriverPath)
            ? null
            : $"Debian's chromium and chromedriver ({ChromiumPath}, {ChromeDriverPath}) are needed; install them with: {InstallHint}";

    /// <param name="trustedKeyHashes">
    /// Base64 SHA-256 hashes of the public keys (SPKI) of certificates the browser is to accept
    /// though no root it trusts signed them: a test's own HTTPS server, pinned, not every certificate.
    /// </param>
    public static ChromeDriver Start(string profileDirectory, string? downloadDirectory = null, int width = 1280, int height = 1000, IReadOnlyList<string>? trustedKeyHashes = null)
    {
        var options = new ChromeOptions { BinaryLocation = ChromiumPath };
        if (trustedKeyHashes is { Count: > 0 })
            options.AddArgument("--ignore-certificate-errors-spki-list=" + string.Join(',', trustedKeyHashes));
        options.AddArguments(
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
            $"--user-data-dir={profileDirectory}", $"--window-size={width},{height}");
        if (downloadDirectory is not null)
        {
            options.AddUserProfilePreference("download.default_directory", downloadDirectory);
            options.AddUserProfilePreference("download.prompt_for_download", false);
        }
        options.SetLoggingPreference(OpenQA.Selenium.LogType.Browser, OpenQA.Selenium.LogLevel.All);
        // The driver's path is given, so Selenium Manager never tries to download one.
        var service = ChromeDriverService.CreateDefaultService(Path.GetDirectoryName(ChromeDriverPath)!, Path.GetFileName(ChromeDriverPath));
        service.SuppressInitialDiagnosticInformation = true;
        service.HideCommandPromptWindow = true;
        var driver = new ChromeDriver(service, options, TimeSpan.FromSeconds(60));
        driver.Manage().Timeouts().PageLoad = TimeSpan.FromSeconds(30);
        return driver;
    }
}
