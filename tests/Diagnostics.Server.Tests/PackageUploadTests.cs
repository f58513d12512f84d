using System.Net;
using System.Net.Http.Headers;
using System.Text.Json;
using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Diagnostics.Server.Tests;

/// <summary>
/// POST /api/debug/package: a debug package someone sent is untrusted input to the server that
/// opens it. A zip bomb, an entry over the size limit, an entry whose headers understate its size,
/// and entries a package never has are refused with an answer that names the limit; the server's
/// managed heap stays within the bound; a real package still opens. Serial: the bomb makes the
/// server allocate hundreds of MB, which would disturb other tests' timings.
/// </summary>
[Collection(QuietMachineCollection.Name)]
public sealed class PackageUploadTests(ITestOutputHelper output)
{
    private const long MiB = 1024 * 1024;
    /// <summary>The default studio-package-memory: what opening one package may allocate.</summary>
    private const long MemoryLimit = 256 * MiB;

    [Fact]
    public void ZipBombIsRefusedAndTheHeapStaysWithinTheBound()
    {
        // 80 million samples: 160 MB of JSON in a zip of about 160 KB; unbounded, 640 MB of longs and more.
        byte[] bomb = HostilePackages.Bomb(80_000_000);
        output.WriteLine($"bomb: {bomb.Length / 1024} KB zipped, 160 MB of JSON");
        Assert.InRange(bomb.Length, 1, 1 * MiB);

        using var server = ServerProcess.Start();
        using var api = new ApiClient(server.HttpPort);
        long heapBefore = api.Get("/api/memory", ContractsJson.Default.MemoryReport).ManagedHeapBytes;
        long peakResidentBefore = PeakResidentBytes(server.Pid);

        var (status, body) = Upload(api, bomb, "bomb.zip");

        long heapAfter = api.Get("/api/memory", ContractsJson.Default.MemoryReport).ManagedHeapBytes;
        long peakResidentAfter = PeakResidentBytes(server.Pid);
        output.WriteLine($"answer {(int)status}: {body}");
        output.WriteLine($"managed heap {heapBefore / MiB} MB before, {heapAfter / MiB} MB after; peak RSS {peakResidentBefore / MiB} MB before, {peakResidentAfter / MiB} MB after");
        Assert.Equal(HttpStatusCode.RequestEntityTooLarge, status);
        Assert.Contains("bomb.zip", body);
        Assert.Matches("studio-package-(max-entry|max-unpacked|memory)", body);
        // Refused: nothing is kept, and what reading it allocated is bounded by the memory limit
        // (garbage not yet collected may still be counted in the heap after).
        Assert.True(heapAfter - heapBefore < MemoryLimit + 64 * MiB, $"the managed heap grew by {(heapAfter - heapBefore) / MiB} MB");
        Assert.True(peakResidentAfter - peakResidentBefore < MemoryLimit + 256 * MiB, $"the peak resident set grew by {(peakResidentAfter - peakResidentBefore) / MiB} MB");
        // And the server carries on.
        using var client = server.Connect();
        RespAssert.Ok(client.Call("SET", "after", "bomb"));
    }

    [Fact]
    public void PackageWithOneHugeEntryIsRefusedNamingTheEntryLimit()
    {
        byte[] package = HostilePackages.OneHugeEntry("log.txt", 40 * MiB);
        using var server = ServerProcess.Start();
        using var api = new ApiClient(server.HttpPort);
        var (status, body) = Upload(api, package, "huge.zip");
        output.WriteLine($"answer {(int)status}: {body}");
        Assert.Equal(HttpStatusCode.RequestEntityTooLarge, status);
        Assert.Contains("huge.zip: log.txt unpacks to more than 32 MB", body);
        Assert.Contains("studio-package-max-entry", body);
    }

    [Fact]
    public void EntryWhoseHeadersUnderstateItsSizeIsStoppedWhileUnpacking()
    {
        // Claims 100 bytes, unpacks to 40 MB: the declared-size check passes it, unpacking must not.
        byte[] package = HostilePackages.UnderstatedEntry(40 * MiB);
        using var server = ServerProcess.Start();
        using var api = new ApiClient(server.HttpPort);
        var (status, body) = Upload(api, package, "liar.zip");
        output.WriteLine($"answer {(int)status}: {body}");
        Assert.True(status is HttpStatusCode.BadRequest or HttpStatusCode.RequestEntityTooLarge, $"answered {(int)status}");
        Assert.Contains("liar.zip", body);
        Assert.Matches("history.json|damaged", body);
    }

    [Fact]
    public void EntriesAPackageNeverHasAreRefused()
    {
        using var server = ServerProcess.Start();
        using var api = new ApiClient(server.HttpPort);
        (byte[] Zip, HttpStatusCode Status, string Message)[] cases =
        [
            (HostilePackages.WithEntries("../../etc/cron.d/evil"), HttpStatusCode.BadRequest, "plain file names, in no folder"),
            (HostilePackages.WithEntries("nested/info.json"), HttpStatusCode.BadRequest, "plain file names, in no folder"),
            (HostilePackages.WithEntries("info.json", "INFO.json"), HttpStatusCode.BadRequest, "two entries named 'INFO.json'"),
            (HostilePackages.WithEntries("manifest.json"), HttpStatusCode.BadRequest, "two entries named 'manifest.json'"),
            (HostilePackages.WithEntries(new string('n', 300)), HttpStatusCode.BadRequest, "plain file names"),
            (HostilePackages.WithEntries([.. Enumerable.Range(0, 200).Select(i => $"extra-{i}.json")]), HttpStatusCode.RequestEntityTooLarge, "holds 201 entries; a debug package holds at most 128"),
        ];
        foreach (var (zip, expectedStatus, message) in cases)
        {
            var (status, body) = Upload(api, zip, "odd.zip");
            Assert.True(status == expectedStatus, $"expected {(int)expectedStatus} with '{message}', got {(int)status}: {body}");
            Assert.Contains(message, body);
        }
    }

    [Fact]
    public async Task RealPackageOpensAndIsCountedAgainstTheLimit()
    {
        using var server = ServerProcess.Start();
        using var api = new ApiClient(server.HttpPort);
        using (new BackgroundLoad(server.Port))
            Poll.Until(() => api.Get("/api/history?seconds=60", ContractsJson.Default.MetricHistory).Times.Length >= 3, "three seconds of history under load");
        byte[] package = await api.Http.GetByteArrayAsync("/api/debug/package");

        var (status, body) = Upload(api, package, "real.zip");
        Assert.True(status == HttpStatusCode.Created, $"answered {(int)status}: {body}");
        var opened = JsonSerializer.Deserialize(body, ContractsJson.Default.PackageOpened)!;
        output.WriteLine($"{package.Length / 1024} KB zipped; holds {opened.MemoryBytes / 1024} KB counted");
        Assert.Matches("^/package/[0-9a-f]{24}$", opened.Path);
        Assert.InRange(opened.MemoryBytes, 1, 64 * MiB);
        Assert.Equal(1, opened.OpenPackages);
        Assert.Equal(opened.MemoryBytes, opened.OpenPackagesBytes);
        Assert.Equal(MemoryLimit, opened.OpenPackagesLimitBytes);
        string page = api.GetText(opened.Path);
        Assert.Contains(Environment.MachineName, page);
    }

    [Fact]
    public async Task OpenPackagesTogetherStayWithinTheirMemoryLimit()
    {
        using var server = ServerProcess.Start();
        using var api = new ApiClient(server.HttpPort);
        byte[] package = await api.Http.GetByteArrayAsync("/api/debug/package");
        var first = JsonSerializer.Deserialize(Upload(api, package, "first.zip").Body, ContractsJson.Default.PackageOpened)!;

        // Room for two and a half of them: opening more closes the oldest.
        long limit = first.MemoryBytes * 5 / 2;
        using (var client = server.Connect())
            RespAssert.Ok(client.Call("CONFIG", "SET", "studio-package-memory", limit.ToString(System.Globalization.CultureInfo.InvariantCulture)));
        PackageOpened last = first;
        for (int i = 0; i < 3; i++)
        {
            var (status, body) = Upload(api, package, $"again-{i}.zip");
            Assert.True(status == HttpStatusCode.Created, $"answered {(int)status}: {body}");
            last = JsonSerializer.Deserialize(body, ContractsJson.Default.PackageOpened)!;
            Assert.True(last.OpenPackagesBytes <= limit, $"{last.OpenPackagesBytes} bytes open, over the limit of {limit}");
            Assert.Equal(limit, last.OpenPackagesLimitBytes);
        }
        Assert.Equal(2, last.OpenPackages);
        Assert.Contains("Package not open", api.GetText(first.Path));
        Assert.DoesNotContain("Package not open", api.GetText(last.Path));
    }

    private static (HttpStatusCode Status, string Body) Upload(ApiClient api, byte[] zip, string name)
    {
        using var content = new ByteArrayContent(zip);
        content.Headers.ContentType = new MediaTypeHeaderValue("application/zip");
        using var response = api.Http.PostAsync($"/api/debug/package?name={Uri.EscapeDataString(name)}", content).GetAwaiter().GetResult();
        return (response.StatusCode, response.Content.ReadAsStringAsync().GetAwaiter().GetResult());
    }

    /// <summary>The process's peak resident set (VmHWM): catches a spike the heap after it no longer shows.</summary>
    private static long PeakResidentBytes(int pid)
    {
        string line = File.ReadLines($"/proc/{pid}/status").First(l => l.StartsWith("VmHWM:", StringComparison.Ordinal));
        return long.Parse(line["VmHWM:".Length..].Trim().Split(' ')[0], System.Globalization.CultureInfo.InvariantCulture) * 1024;
    }
}
