using System.IO.Compression;
using System.Text;
using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// Secret settings (requirepass, masterauth, http-api-key) and passwords in commands (AUTH,
/// HELLO AUTH) are "(redacted)" wherever a command's arguments or the configuration are shown,
/// by one rule keyed on the setting's flag. CONFIG GET answers Redis's own passwords as Redis
/// does; the HTTP API key, a credential Redis does not have, it never discloses to RESP clients.
/// </summary>
public sealed class SecretSettingsTests
{
    [Fact]
    public void SlowLogRedactsSensitiveSettingsAndPasswordsAsRedisDoes()
    {
        const string password = "side-by-side-Pa55";
        using var redis = RealRedisServer.Start("--slowlog-log-slower-than", "0", "--requirepass", password);
        using var server = ServerProcess.Start("--slowlog-log-slower-than", "0", "--requirepass", password);
        using var ours = server.Connect();
        using var theirs = redis.Connect();

        string[][] commands =
        [
            ["AUTH", password],
            ["AUTH", "default", password],
            ["HELLO", "2", "AUTH", "default", password, "SETNAME", "redaction"],
            ["CONFIG", "SET", "masterauth", "master-Pa55", "maxmemory-samples", "6"],
            ["CONFIG", "SET", "maxmemory-samples", "5", "requirepass", password],
            // Refused, and still redacted: the secret is in the command whether it applies or not.
            ["CONFIG", "SET", "requirepass", "refused-Pa55", "no-such-setting", "1"],
            ["CONFIG", "SET", "MASTERAUTH", "master-Pa55"],
        ];
        var logged = new List<List<string>>[2];
        int side = 0;
        foreach (var c in new[] { ours, theirs })
        {
            RespAssert.Ok(c.Call("AUTH", password));
            RespAssert.Ok(c.Call("SLOWLOG", "RESET"));
            foreach (var command in commands)
                c.Call(command);
            var entries = c.Call("SLOWLOG", "GET", "-1").Array;
            logged[side++] = [.. entries.Select(e => e.Array[3].Array.Select(a => a.Text!).ToList()).Reverse().Skip(1)];
        }
        Assert.Equal(logged[1].Count, logged[0].Count);
        for (int i = 0; i < logged[1].Count; i++)
            Assert.Equal(logged[1][i], logged[0][i]);
        Assert.Equal(["CONFIG", "SET", "MASTERAUTH", "(redacted)"], logged[0][^1]);

        // Redis answers its own passwords to a client allowed to run CONFIG GET.
        foreach (var c in new[] { ours, theirs })
            RespAssert.BulkArray(c.Call("CONFIG", "GET", "masterauth"), "masterauth", "master-Pa55");

        // The TLS keys' passwords: redis-server 7.0 shows them in SLOWLOG (it marks only requirepass
        // and masterauth sensitive); here they are redacted like them, and CONFIG GET answers them as Redis does.
        foreach (var c in new[] { ours, theirs })
        {
            RespAssert.Ok(c.Call("SLOWLOG", "RESET"));
            RespAssert.Ok(c.Call("CONFIG", "SET", "tls-key-file-pass", "key-Pa55", "tls-client-key-file-pass", "client-key-Pa55"));
            RespAssert.BulkArray(c.Call("CONFIG", "GET", "tls-key-file-pass"), "tls-key-file-pass", "key-Pa55");
        }
        var slow = ours.Call("SLOWLOG", "GET", "-1").Array;
        Assert.Contains(slow, e => e.Array[3].Array.Select(a => a.Text).SequenceEqual(["CONFIG", "SET", "tls-key-file-pass", "(redacted)", "tls-client-key-file-pass", "(redacted)"]));
        Assert.DoesNotContain("Pa55", RespValue.Render(slow));
    }

    [Fact]
    public async Task ConfigGetNeverDisclosesTheHttpApiKey()
    {
        const string key = "resp-must-not-read-this-key";
        const string newKey = "second-key-set-over-resp";
        using var server = ServerProcess.Start("--http-api-key", key);
        using var c = server.Connect();

        RespAssert.BulkArray(c.Call("CONFIG", "GET", "http-api-key"), "http-api-key", "(redacted)");
        Assert.DoesNotContain(key, RespValue.Render(c.Call("CONFIG", "GET", "*").Array));
        // Setting it back to what CONFIG GET showed would make the marker the key: refused.
        RespAssert.Error("ERR CONFIG SET failed (possibly related to argument 'http-api-key') - the value is the redaction marker '(redacted)', not a key",
            c.Call("CONFIG", "SET", "http-api-key", "(redacted)"));

        // A client that may run CONFIG SET can still change the key; it cannot read it back.
        RespAssert.Ok(c.Call("CONFIG", "SET", "http-api-key", newKey));
        RespAssert.BulkArray(c.Call("CONFIG", "GET", "http-api-key"), "http-api-key", "(redacted)");
        using var api = new ApiClient(server.HttpPort, newKey);
        Assert.Equal("(redacted)", api.Get("/api/config", ContractsJson.Default.DictionaryStringString)["http-api-key"]);
        using var stale = new ApiClient(server.HttpPort, key);
        using var refused = await stale.Http.GetAsync("/api/config");
        Assert.Equal(System.Net.HttpStatusCode.Unauthorized, refused.StatusCode);

        RespAssert.Ok(c.Call("CONFIG", "SET", "http-api-key", ""));
        RespAssert.BulkArray(c.Call("CONFIG", "GET", "http-api-key"), "http-api-key", "");
    }

    /// <summary>
    /// Secrets set at start and over RESP, used in AUTH and HELLO, then everything a client or an
    /// operator can read is searched for them: the slow log, CLIENT LIST and INFO, CONFIG GET,
    /// every HTTP endpoint in the debug package (unzipped, every entry), /metrics and the log.
    /// </summary>
    [Fact]
    public async Task NoSecretAppearsInAnythingAClientOrOperatorCanRead()
    {
        const string startPassword = "start-Pa55-word";
        const string startKey = "start-http-api-key";
        const string setPassword = "set-over-resp-Pa55";
        const string setKey = "set-over-resp-http-key";
        using var server = ServerProcess.Start("--requirepass", startPassword, "--http-api-key", startKey,
            "--slowlog-log-slower-than", "0", "--loglevel", "debug");
        // With --loglevel the start returns once RESP answers; the HTTP listener is up by the ready line.
        Poll.Until(() => server.Output.Contains("Ready to accept connections", StringComparison.Ordinal), "the server logged that it is ready", 30_000);
        using var c = server.Connect();
        RespAssert.Ok(c.Call("AUTH", startPassword));
        RespAssert.Ok(c.Call("CONFIG", "SET", "http-api-key", setKey, "maxmemory-samples", "6"));
        RespAssert.Ok(c.Call("CONFIG", "SET", "requirepass", setPassword));
        Assert.False(c.Call("HELLO", "2", "AUTH", "default", setPassword, "SETNAME", "secret-test").IsError, "HELLO AUTH failed");
        RespAssert.Error("WRONGPASS invalid username-password pair or user is disabled.", c.Call("AUTH", "default", startPassword));
        RespAssert.Ok(c.Call("AUTH", setPassword));

        var readable = new Dictionary<string, string>
        {
            ["SLOWLOG GET"] = RespValue.Render(c.Call("SLOWLOG", "GET", "-1").Array),
            ["CLIENT LIST"] = c.Call("CLIENT", "LIST").Text!,
            ["CLIENT INFO"] = c.Call("CLIENT", "INFO").Text!,
            ["INFO everything"] = c.Call("INFO", "everything").Text!,
        };
        // CONFIG GET answers Redis's own password as Redis does; it must not answer the HTTP key.
        var config = c.Call("CONFIG", "GET", "*").ToMap();
        readable["CONFIG GET * except requirepass"] = string.Join("\n",
            config.Where(p => p.Key != "requirepass").Select(p => $"{p.Key} {p.Value.Text}"));
        Assert.Equal(setPassword, config["requirepass"].Text);

        using var api = new ApiClient(server.HttpPort, setKey);
        readable["/metrics"] = api.GetText("/metrics");
        readable["/api/config"] = api.GetText("/api/config");
        readable["/api/slowlog"] = api.GetText("/api/slowlog");
        using (var response = await api.Http.GetAsync("/api/debug/package"))
        {
            Assert.True(response.IsSuccessStatusCode, $"package answered {(int)response.StatusCode}");
            using var zip = new ZipArchive(new MemoryStream(await response.Content.ReadAsByteArrayAsync()), ZipArchiveMode.Read);
            foreach (var entry in zip.Entries)
            {
                using var reader = new StreamReader(entry.Open(), Encoding.UTF8);
                readable["package " + entry.FullName] = reader.ReadToEnd();
            }
            Assert.Contains("package slowlog.json", readable.Keys);
            Assert.Contains("package config.json", readable.Keys);
            Assert.Contains("package log.txt", readable.Keys);
        }
        readable["server output"] = server.Output;

        Assert.Contains("(redacted)", readable["package slowlog.json"]);
        foreach (string secret in new[] { startPassword, startKey, setPassword, setKey })
            foreach (var (where, text) in readable)
                Assert.False(text.Contains(secret, StringComparison.Ordinal), $"'{secret}' appears in {where}:\n{text}");
    }
}
