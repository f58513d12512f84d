using System.IO.Compression;
using System.Text;
using System.Text.Json;
using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>GET /api/debug/package: a zip whose manifest lists every entry, and no secret in any of them.</summary>
public sealed class DebugPackageTests
{
    private const string Password = "package-test-s3cret-Pa55";

    [Fact]
    public async Task PackageHoldsEveryEntryItsManifestListsAndNoSecret()
    {
        using var server = ServerProcess.Start("--requirepass", Password, "--http-api-key", "package-test-api-key", "--slowlog-log-slower-than", "0");
        using (var c = server.Connect())
        {
            RespAssert.Ok(c.Call("AUTH", Password));
            RespAssert.Ok(c.Call("SET", "package:key", "value"));
            RespAssert.Ok(c.Call("CONFIG", "SET", "requirepass", Password));
        }
        using var api = new ApiClient(server.HttpPort, "package-test-api-key");
        using var response = await api.Http.GetAsync("/api/debug/package");
        Assert.True(response.IsSuccessStatusCode, $"package answered {(int)response.StatusCode}");
        Assert.Equal("application/zip", response.Content.Headers.ContentType?.MediaType);
        byte[] zipBytes = await response.Content.ReadAsByteArrayAsync();
        Assert.Equal(response.Content.Headers.ContentLength, zipBytes.Length);
        Assert.StartsWith("attachment;", response.Content.Headers.ContentDisposition?.ToString());

        using var zip = new ZipArchive(new MemoryStream(zipBytes), ZipArchiveMode.Read);
        var manifestEntry = zip.GetEntry(PackageManifest.FileName);
        Assert.NotNull(manifestEntry);
        PackageManifest manifest;
        using (var stream = manifestEntry.Open())
            manifest = JsonSerializer.Deserialize(stream, ContractsJson.Default.PackageManifest)!;
        Assert.Equal(server.Pid, manifest.ProcessId);
        Assert.Equal(Environment.MachineName, manifest.Host);
        Assert.False(string.IsNullOrEmpty(manifest.ProductVersion));
        Assert.InRange(manifest.TakenAt, DateTimeOffset.UtcNow.AddMinutes(-2), DateTimeOffset.UtcNow.AddMinutes(1));

        string[] expected =
        [
            "info.json", "info.txt", "history.json", "threads.json", "clients.json", "inflight.json", "commands.json",
            "slowlog.json", "memory.json", "diskio.json", "runtime.json", "environment.json", "config.json", "log.txt", "metrics.txt",
            "latency.json", "stacks.txt", "doctor.json", "keyspace.json", "replication.json",
        ];
        foreach (string name in expected)
            Assert.Contains(manifest.Entries, e => e.Name == name);

        // Every listed entry is in the zip with the listed size; nothing is in the zip unlisted.
        foreach (var entry in manifest.Entries)
        {
            Assert.True(entry.Error is null, $"{entry.Name} failed: {entry.Error}");
            var file = zip.GetEntry(entry.Name);
            Assert.NotNull(file);
            Assert.Equal(entry.Bytes, file.Length);
            Assert.True(entry.Milliseconds >= 0);
        }
        Assert.Equal(manifest.Entries.Count + 1, zip.Entries.Count);

        var texts = new Dictionary<string, string>();
        foreach (var file in zip.Entries)
        {
            using var reader = new StreamReader(file.Open(), Encoding.UTF8);
            texts[file.FullName] = reader.ReadToEnd();
        }
        foreach (var (name, text) in texts)
        {
            Assert.DoesNotContain(Password, text);
            Assert.DoesNotContain("package-test-api-key", text);
            if (name.EndsWith(".json", StringComparison.Ordinal))
                JsonDocument.Parse(text).Dispose();
        }
        var config = JsonSerializer.Deserialize(texts["config.json"], ContractsJson.Default.DictionaryStringString)!;
        Assert.Equal("(redacted)", config["requirepass"]);
        Assert.Equal("(redacted)", config["http-api-key"]);
        // The slow log logged AUTH and CONFIG SET requirepass, with the password redacted.
        Assert.Contains("(redacted)", texts["slowlog.json"]);
        Assert.Contains("redis_commands_total{cmd=\"set\"} 1", texts["metrics.txt"]);
        Assert.Contains("# Server", texts["info.txt"]);
    }
}
