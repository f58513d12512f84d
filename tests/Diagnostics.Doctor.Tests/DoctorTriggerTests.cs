using System.IO.Compression;
using System.Net;
using Diagnostics.Contracts;
using Diagnostics.Doctor;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The doctor acts: a real fault (writes refused for maxmemory) makes the server take a debug
/// package by itself, kept owner-only under dir, listed with why and what it cost, downloadable and
/// openable offline; a metric held past a threshold does the same, at most once per interval, and
/// the folder keeps only the newest; a folder that is a link is refused.
/// </summary>
[Collection(QuietMachineCollection.Name)]
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class DoctorTriggerTests
{
    [Fact]
    public async Task RefusedWritesTakeAPackageByThemselves()
    {
        using var dir = new TempDirectory();
        using var server = ServerProcess.Start("--dir", dir.Path, "--maxmemory-policy", "noeviction");
        using var api = new ApiClient(server.HttpPort);
        Assert.Equal("critical", api.Get("/api/debug/packages", ContractsJson.Default.TriggerReport).Severity);
        using (var c = server.Connect())
        {
            for (int i = 0; i < 50; i++)
                RespAssert.Ok(c.Call("SET", "fill:" + i, new string('f', 10_000)));
            long used = InfoFields.GetInt64(c, "memory", "used_memory");
            RespAssert.Ok(c.Call("CONFIG", "SET", "maxmemory", (used + 20_000).ToString()));
            int refused = 0;
            for (int i = 50; i < 80; i++)
                refused += c.Call("SET", "fill:" + i, new string('f', 10_000)).Kind == '-' ? 1 : 0;
            Assert.True(refused >= 20, $"only {refused} writes were refused");
        }

        TriggerReport report = null!;
        Poll.Until(() => (report = api.Get("/api/debug/packages", ContractsJson.Default.TriggerReport)).Packages.Count > 0,
            () => $"a package taken for the refused writes (taken {report.Taken}, failed {report.Failed}: {report.LastSkipped})", timeoutMs: 30_000);
        var package = Assert.Single(report.Packages);
        Assert.Equal(1, report.Taken);
        Assert.StartsWith("doctor finding memory-near-maxmemory (critical): ", package.Reason);
        Assert.Matches(@"^package-\d{8}-\d{6}-memory-near-maxmemory\.zip$", package.Name);
        // What it cost is shown: the time to build it and its slowest entry.
        Assert.True(package.BuildMilliseconds > 0);
        Assert.Matches(@"^\S+ \d+ ms$", package.SlowestEntry!);

        // Kept owner-only under dir: it holds the configuration and client addresses.
        string folder = Path.Combine(dir.Path, "debug-packages");
        Assert.Equal(folder, report.Folder);
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute, File.GetUnixFileMode(folder));
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(Path.Combine(folder, package.Name)));

        // INFO says the same.
        using (var c = server.Connect())
        {
            var info = InfoFields.Read(c, "triggers");
            Assert.Equal("1", info["trigger_packages_taken"]);
            Assert.Equal(package.Name, info["trigger_last_package"]);
            Assert.Equal(package.Reason, info["trigger_last_reason"]);
            Assert.Equal(package.Bytes.ToString(), info["trigger_last_bytes"]);
        }

        // Downloaded, it is a package taken at the fault: its manifest says why, and the doctor
        // run over it offline finds the refused writes.
        byte[] zipBytes = await api.Http.GetByteArrayAsync("/api/debug/packages/" + package.Name);
        Assert.Equal(package.Bytes, zipBytes.Length);
        using (var zip = new ZipArchive(new MemoryStream(zipBytes), ZipArchiveMode.Read))
        {
            Assert.Equal(package.Reason, PackageReader.ReadManifest(zip).Trigger);
            var offline = DoctorRules.Examine(PackageReader.ReadInput(zip));
            Assert.Contains(offline.Findings, f => f.Rule == "memory-near-maxmemory" && f.Severity == FindingSeverity.Critical);
        }
        // Opened for the studio without downloading it.
        using (var opened = api.Send(HttpMethod.Post, $"/api/debug/packages/{package.Name}/open", null))
        {
            Assert.Equal(HttpStatusCode.Created, opened.StatusCode);
            var answer = System.Text.Json.JsonSerializer.Deserialize(await opened.Content.ReadAsStringAsync(), ContractsJson.Default.PackageOpened)!;
            Assert.Matches("^/package/[0-9a-f]{24}$", answer.Path);
            Assert.Equal(package.Name, answer.FileName);
        }
        // Only names the list gives reach a file.
        foreach (string name in (string[])["..%2F..%2Fetc%2Fpasswd", "package-20260101-000000-x.zip", "manifest.json"])
            Assert.Equal(HttpStatusCode.NotFound, api.StatusOf(HttpMethod.Get, "/api/debug/packages/" + name));
        // And the reply never reflects the name a link put in the path.
        using (var notFound = api.Send(HttpMethod.Get, "/api/debug/packages/%3Cscript%3Ealert(1)%3C%2Fscript%3E.zip", null))
        {
            Assert.Equal(HttpStatusCode.NotFound, notFound.StatusCode);
            Assert.Equal("text/plain", notFound.Content.Headers.ContentType!.MediaType);
            Assert.DoesNotContain("script", await notFound.Content.ReadAsStringAsync());
        }
    }

    [Fact]
    public void AMetricPastItsThresholdTakesOnePackagePerIntervalAndTheFolderKeepsTheNewest()
    {
        using var dir = new TempDirectory();
        // Packages from an earlier run, and a file that is not one: only packages are pruned.
        string folder = Directory.CreateDirectory(Path.Combine(dir.Path, "debug-packages")).FullName;
        foreach (string old in (string[])["package-20200101-000000-old.zip", "package-20200102-000000-older.zip"])
            File.WriteAllBytes(Path.Combine(folder, old), EmptyZip());
        File.WriteAllText(Path.Combine(folder, "notes.txt"), "mine");
        using var server = ServerProcess.Start("--dir", dir.Path, "--package-trigger-severity", "off",
            "--package-trigger-metrics", "connected_clients 0 2", "--package-trigger-interval", "60", "--package-trigger-keep", "2");
        using var api = new ApiClient(server.HttpPort);
        TriggerReport report = api.Get("/api/debug/packages", ContractsJson.Default.TriggerReport);
        Assert.Equal(["connected_clients 0 2"], report.MetricRules);
        Assert.Equal(0, report.Taken);

        // One RESP client connected for two seconds: connected_clients > 0 for 2 s.
        using (server.Connect())
        {
            Poll.Until(() => (report = api.Get("/api/debug/packages", ContractsJson.Default.TriggerReport)).Taken == 1,
                "a package for connected_clients", timeoutMs: 20_000);
        }
        // The package is counted as soon as it is written; the folder is pruned right after.
        Poll.Until(() => (report = api.Get("/api/debug/packages", ContractsJson.Default.TriggerReport)).Packages.Count == 2,
            () => $"the folder pruned to 2 packages (lists {string.Join(", ", report.Packages.Select(p => p.Name))})");
        var taken = report.Packages[0];
        Assert.Equal("connected_clients was above 0 for 2 s (now 1)", taken.Reason);
        Assert.Matches(@"-connected-clients\.zip$", taken.Name);
        // Kept: the new one and the newest older one; the oldest went, the other file stayed.
        Assert.Equal([taken.Name, "package-20200102-000000-older.zip"], report.Packages.Select(p => p.Name));
        Assert.False(File.Exists(Path.Combine(folder, "package-20200101-000000-old.zip")));
        Assert.True(File.Exists(Path.Combine(folder, "notes.txt")));

        // A second episode within the interval: counted as skipped, no package.
        using (var history = new ApiClient(server.HttpPort))
            Poll.Until(() => history.Get("/api/history?seconds=2", ContractsJson.Default.MetricHistory) is var h
                && h.Series.TryGetValue(MetricNames.ConnectedClients, out var values) && values.Length > 0 && values[^1] == 0, "connected_clients back to 0");
        using (server.Connect())
        {
            Poll.Until(() => (report = api.Get("/api/debug/packages", ContractsJson.Default.TriggerReport)).Skipped == 1,
                "the second episode skipped", timeoutMs: 20_000);
        }
        Assert.Equal(1, report.Taken);
        Assert.Equal("connected_clients was above 0 for 2 s (now 1): within 60 s of the last package", report.LastSkipped);
    }

    [Fact]
    public void AFolderThatIsALinkIsRefused()
    {
        using var dir = new TempDirectory();
        using var elsewhere = new TempDirectory();
        File.CreateSymbolicLink(Path.Combine(dir.Path, "debug-packages"), elsewhere.Path);
        using var server = ServerProcess.Start("--dir", dir.Path, "--package-trigger-severity", "off", "--package-trigger-metrics", "connected_clients 0 1");
        using var api = new ApiClient(server.HttpPort);
        TriggerReport report = null!;
        using (server.Connect())
            Poll.Until(() => (report = api.Get("/api/debug/packages", ContractsJson.Default.TriggerReport)).Failed == 1, "the trigger to fail", timeoutMs: 20_000);
        Assert.Contains("is a symbolic link", report.LastSkipped);
        Assert.Empty(Directory.GetFiles(elsewhere.Path));
        server.WaitForOutput("the debug package failed");
    }

    [Fact]
    public void SettingsAreCheckedAsRedisChecksItsOwn()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        RespAssert.Ok(c.Call("CONFIG", "SET", "package-trigger-metrics", "cpu_process_percent 90 30 latency_p99_usec 50000 10"));
        Assert.Equal("cpu_process_percent 90 30 latency_p99_usec 50000 10", c.Call("CONFIG", "GET", "package-trigger-metrics").Items![1].Text);
        Assert.Contains("'nope' is not a metric of the history", c.Call("CONFIG", "SET", "package-trigger-metrics", "nope 1 1").Text);
        Assert.Contains("expected triples", c.Call("CONFIG", "SET", "package-trigger-metrics", "cpu_process_percent 90").Text);
        Assert.Contains("must be between 1 and 86400", c.Call("CONFIG", "SET", "package-trigger-metrics", "cpu_process_percent 90 0").Text);
        Assert.StartsWith("ERR CONFIG SET failed", c.Call("CONFIG", "SET", "package-trigger-severity", "sometimes").Text);
        Assert.StartsWith("ERR CONFIG SET failed", c.Call("CONFIG", "SET", "package-trigger-interval", "5").Text);
        RespAssert.Ok(c.Call("CONFIG", "SET", "package-trigger-severity", "warning"));
        Assert.Equal("warning", InfoFields.Get(c, "triggers", "trigger_severity"));
    }

    private static byte[] EmptyZip()
    {
        var buffer = new MemoryStream();
        using (new ZipArchive(buffer, ZipArchiveMode.Create, leaveOpen: true))
        {
        }
        return buffer.ToArray();
    }
}
