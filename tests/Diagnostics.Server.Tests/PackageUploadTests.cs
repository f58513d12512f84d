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

    /// <summary>
    /// 80 million samples: 160 MB of JSON in a zip of 152 KB (unbounded, it left 2.4 GB on the heap),
    /// refused by its declared size. 15 million: 30 MB of JSON, within the size limits, whose longs
    /// (and the list they grow in) would take 360 MB: stopped while reading by the memory limit.
    /// </summary>
    [Theory]
    [InlineData(80_000_000, "studio-package-max-entry")]
    [InlineData(15_000_000, "studio-package-memory")]
    public void ZipBombIsRefusedAndTheHeapStaysWithinTheBound(long samples, string limit)
    {
        byte[] bomb = HostilePackages.Bomb(samples);
        output.WriteLine($"bomb: {bomb.Length / 1024} KB zipped, {samples * 2 / MiB} MB of JSON");
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
        Assert.Contains(limit, body);
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
        // Claims 100 bytes, unpacks to 40 MB: the declared-size check passes it. The zip reader stops
        // at the declared size (the JSON is then cut short), and the reader's own count of unpacked
        // bytes would stop it at the entry limit: either way it is refused and nothing is kept.
        byte[] package = HostilePackages.UnderstatedEntry(40 * MiB);
        using var server = ServerProcess.Start();
        using var api = new ApiClient(server.HttpPort);
        var (status, body) = Upload(api, package, "liar.zip");
        output.WriteLine($"answer {(int)status}: {body}");
        Assert.True(status is HttpStatusCode.BadRequest or HttpStatusCode.RequestEntityTooLarge, $"answered {(int)status}");
        Assert.Contains("liar.zip", body);
        Assert.Matches("not valid JSON|studio-package-max-entry", body);
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
    public void NullsInTheManifestsListsAreSkippedAndThePagesRender()
    {
        using var server = ServerProcess.Start();
        using var api = new ApiClient(server.HttpPort);
        var (status, body) = Upload(api, HostilePackages.NullsInManifestLists(), "nulls.zip");
        Assert.True(status == HttpStatusCode.Created, $"answered {(int)status}: {body}");
        var opened = JsonSerializer.Deserialize(body, ContractsJson.Default.PackageOpened)!;
        string page = api.GetText(opened.Path + "/package");
        Assert.DoesNotContain("This page failed", page);
        Assert.Contains("mallory", page);
        Assert.Contains("clients.json", page);
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
        // Forty connected clients make each package (its clients.json) weigh about twice what an idle server's does.
        var clients = Enumerable.Range(0, 40).Select(_ => server.Connect()).ToList();
        foreach (var client in clients)
            RespAssert.Ok(client.Call("CLIENT", "SETNAME", "weight"));
        byte[] package = await api.Http.GetByteArrayAsync("/api/debug/package");
        clients.ForEach(c => c.Dispose());
        // The first reading also pays for warming up the serializer: measure the second.
        var first = JsonSerializer.Deserialize(Upload(api, package, "first.zip").Body, ContractsJson.Default.PackageOpened)!;
        var second = JsonSerializer.Deserialize(Upload(api, package, "second.zip").Body, ContractsJson.Default.PackageOpened)!;
        output.WriteLine($"counted: first {first.MemoryBytes / 1024} KB, second {second.MemoryBytes / 1024} KB");

        // 1 MB (the least the setting takes) holds about four such packages, fewer than the eight the
        // studio keeps: opening ten closes the oldest to stay within the memory limit.
        const long limit = MiB;
        using (var client = server.Connect())
            RespAssert.Ok(client.Call("CONFIG", "SET", "studio-package-memory", "1mb"));
        Assert.True(second.MemoryBytes * 6 > limit, $"a package counted {second.MemoryBytes} bytes: six fit in {limit}, the test needs fewer");
        PackageOpened last = second;
        for (int i = 0; i < 10; i++)
        {
            var (status, body) = Upload(api, package, $"again-{i}.zip");
            Assert.True(status == HttpStatusCode.Created, $"answered {(int)status}: {body}");
            last = JsonSerializer.Deserialize(body, ContractsJson.Default.PackageOpened)!;
            Assert.True(last.OpenPackagesBytes <= limit, $"{last.OpenPackagesBytes} bytes open, over the limit of {limit}");
            Assert.Equal(limit, last.OpenPackagesLimitBytes);
        }
        output.WriteLine($"open: {last.OpenPackages} packages, {last.OpenPackagesBytes / 1024} KB");
        Assert.InRange(last.OpenPackages, 1, 7);
        Assert.Contains("Package not open", api.GetText(first.Path));
        Assert.Contains("Package not open", api.GetText(second.Path));
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
