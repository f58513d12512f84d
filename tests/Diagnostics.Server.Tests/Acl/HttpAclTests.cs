using System.Net;
using System.Net.Http.Headers;
using System.Text;
using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Acl;

/// <summary>
/// The HTTP API and the studio log in as ACL users: Basic or the login form as a user, the API
/// key as a machine credential with its own scope. What a route needs is checked against the
/// user's current rules, refusals name the rule that would allow it and reach ACL LOG, and a
/// session ends when its user is deleted, turned off or its password changes.
/// </summary>
public sealed class HttpAclTests
{
    private const string Password = "admin-pw-31";
    private const string WatcherPassword = "watch-pw-77";

    private static ServerProcess StartWithWatcher(params string[] more) => ServerProcess.Start(
        ["--requirepass", Password, "--user", $"watcher on >{WatcherPassword} +info", "--user", "open on nopass +@all ~* &*", .. more]);

    private static HttpClient Basic(int httpPort, string user, string password) => new()
    {
        BaseAddress = new Uri($"http://127.0.0.1:{httpPort}"),
        Timeout = TimeSpan.FromSeconds(60),
        DefaultRequestHeaders = { Authorization = new AuthenticationHeaderValue("Basic", Convert.ToBase64String(Encoding.UTF8.GetBytes($"{user}:{password}"))) },
    };

    private static (HttpStatusCode Status, string Body) Send(HttpClient http, HttpMethod method, string path)
    {
        using var request = new HttpRequestMessage(method, path);
        using var response = http.SendAsync(request).GetAwaiter().GetResult();
        return (response.StatusCode, Text(response));
    }

    private static string Text(HttpResponseMessage response) => response.Content.ReadAsStringAsync().GetAwaiter().GetResult();

    private static byte[] Bytes(ApiClient api, string path) => api.Http.GetByteArrayAsync(path).GetAwaiter().GetResult();

    [Fact]
    public void EveryRouteNeedsItsDeclaredPermissionsFromTheUsersRules()
    {
        using var server = StartWithWatcher();
        using var admin = new ApiClient(server.HttpPort, Password);
        using var watcher = Basic(server.HttpPort, "watcher", WatcherPassword);
        // The server's own route list names what each route needs, so routes added later are covered.
        var routes = admin.GetText("/api/endpoints").Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Contains("GET /api/clients Operator watch clients", routes);
        Assert.Contains("POST /api/clients/{id:long}/kill Operator watch kill-clients", routes);
        Assert.Contains("GET /api/debug/package Operator watch", routes); // what the login may see of it (below)
        Assert.Contains("GET /api/debug/packages/{name} Operator watch package", routes); // the server's own, whole
        Assert.Contains("GET /api/acl/log Operator watch acl-log", routes);
        int refused = 0, allowed = 0;
        foreach (string line in routes)
        {
            string[] parts = line.Split(' ');
            if (parts[2] != "Operator" || parts[1].Contains("{**", StringComparison.Ordinal))
                continue;
            Assert.True(parts.Length > 3, $"{line}: an operator route declares its permissions");
            string method = parts[0] == "*" ? "GET" : parts[0].Split(',')[0];
            string path = System.Text.RegularExpressions.Regex.Replace(parts[1], @"\{[^}]*\}", "1");
            if (method == "POST" && path == "/api/debug/package")
                continue; // an upload: needs a body, and only watch
            var (status, body) = Send(watcher, new HttpMethod(method), path);
            bool watchOnly = parts[3..].All(p => p is "watch" or "none");
            if (watchOnly)
            {
                Assert.True(status != HttpStatusCode.Forbidden && status != HttpStatusCode.Unauthorized, $"{line}: the watcher got {(int)status}: {body}");
                allowed++;
            }
            else
            {
                Assert.True(status == HttpStatusCode.Forbidden, $"{line}: the watcher got {(int)status}: {body}");
                Assert.Contains("The ACL user 'watcher' may not use ", body);
                Assert.Contains("ACL SETUSER watcher +", body);
                refused++;
            }
        }
        Assert.True(allowed > 15 && refused >= 8, $"{allowed} allowed, {refused} refused");

        // Granting the command over RESP grants the route, from the next request on.
        using var c = server.Connect();
        RespAssert.Ok(c.Call("AUTH", Password));
        Assert.Equal(HttpStatusCode.Forbidden, Send(watcher, HttpMethod.Get, "/api/clients").Status);
        RespAssert.Ok(c.Call("ACL", "SETUSER", "watcher", "+client|list"));
        var (listed, clients) = Send(watcher, HttpMethod.Get, "/api/clients");
        Assert.Equal(HttpStatusCode.OK, listed);
        Assert.StartsWith("[", clients);
        // ... and a server's own (triggered) package needs everything a package holds: watch, clients, slowlog, keys, config, acl-log.
        var (packageStatus, packageBody) = Send(watcher, HttpMethod.Get, "/api/debug/packages/none.zip");
        Assert.Equal(HttpStatusCode.Forbidden, packageStatus);
        Assert.Contains("+slowlog|get +scan +config|get +acl|log", packageBody);
        RespAssert.Ok(c.Call("ACL", "SETUSER", "watcher", "+slowlog|get", "+scan", "+config|get", "+acl|log"));
        Assert.Equal(HttpStatusCode.NotFound, Send(watcher, HttpMethod.Get, "/api/debug/packages/none.zip").Status);
        // The script source needs function|list, checked by the endpoint on its query.
        var (source, sourceBody) = Send(watcher, HttpMethod.Get, "/api/scripts?source=true");
        Assert.Equal(HttpStatusCode.Forbidden, source);
        Assert.Contains("+function|list", sourceBody);
        Assert.Equal(HttpStatusCode.OK, Send(watcher, HttpMethod.Get, "/api/scripts").Status);
    }

    [Fact]
    public void RefusalsAndFailedLoginsReachAclLogAndTheFailureSources()
    {
        using var server = StartWithWatcher();
        using (var watcher = Basic(server.HttpPort, "watcher", WatcherPassword))
            Assert.Equal(HttpStatusCode.Forbidden, Send(watcher, HttpMethod.Post, "/api/clients/1/kill").Status);
        using (var wrong = Basic(server.HttpPort, "watcher", "guess"))
            Assert.Equal(HttpStatusCode.Unauthorized, Send(wrong, HttpMethod.Get, "/api/info").Status);
        // A user without a password has no HTTP login: nopass is the loopback-open mode's, not a password that takes anything.
        using (var open = Basic(server.HttpPort, "open", "anything"))
            Assert.Equal(HttpStatusCode.Unauthorized, Send(open, HttpMethod.Get, "/api/info").Status);
        using (var nobody = Basic(server.HttpPort, "nobody", "x"))
            Assert.Equal(HttpStatusCode.Unauthorized, Send(nobody, HttpMethod.Get, "/api/info").Status);

        using var c = server.Connect();
        RespAssert.Ok(c.Call("AUTH", Password));
        var entries = c.Call("ACL", "LOG").Items!.Select(e => e.ToMap()).ToList();
        var kill = Assert.Single(entries, e => e["reason"].Text == "command");
        Assert.Equal("http", kill["context"].Text);
        Assert.Equal("client|kill", kill["object"].Text);
        Assert.Equal("watcher", kill["username"].Text);
        Assert.Matches(@"^addr=127\.0\.0\.1:\d+ laddr=127\.0\.0\.1:\d+ http=POST /api/clients/\{id:long\}/kill$", kill["client-info"].Text);
        var failed = entries.Where(e => e["reason"].Text == "auth").ToDictionary(e => e["username"].Text!, e => e["object"].Text);
        Assert.Equal(new Dictionary<string, string?> { ["watcher"] = "basic", ["open"] = "basic", ["nobody"] = "basic" }, failed);
        Assert.DoesNotContain("guess", c.Call("ACL", "LOG").ToString());
        // Per source and user, beside AUTH's failures.
        var acl = InfoFields.Read(c, "acl");
        var sources = acl.Where(f => f.Key.StartsWith("auth_failure_source_", StringComparison.Ordinal)).Select(f => f.Value).ToList();
        Assert.Contains(sources, s => s.StartsWith("addr=127.0.0.1,user=watcher,count=1,", StringComparison.Ordinal));
        Assert.Equal(3, InfoFields.GetInt64(c, "stats", "http_auth_failures"));

        // The same entries through the API and in the debug package, which an operator reads offline.
        using var admin = new ApiClient(server.HttpPort, Password);
        var records = admin.Get("/api/acl/log", ContractsJson.Default.AclLogRecordArray);
        Assert.Contains(records, r => r is { Reason: "command", Context: "http", Object: "client|kill", Username: "watcher" });
        byte[] package = Bytes(admin, "/api/debug/package");
        using var zip = new System.IO.Compression.ZipArchive(new MemoryStream(package));
        using var reader = new StreamReader(zip.GetEntry("acl-log.json")!.Open());
        string packaged = reader.ReadToEnd();
        Assert.Contains("\"client|kill\"", packaged);
        Assert.DoesNotContain("guess", packaged);
        Assert.DoesNotContain(WatcherPassword, packaged);
    }

    [Fact]
    public async Task APackageHoldsWhatItsLoginMaySeeAndNamesWhatItLeavesOut()
    {
        using var server = StartWithWatcher();
        using var c = server.Connect();
        RespAssert.Ok(c.Call("AUTH", Password));
        RespAssert.Ok(c.Call("SET", "secret-key", "secret-value"));
        RespAssert.Ok(c.Call("CONFIG", "SET", "slowlog-log-slower-than", "0"));
        RespAssert.Ok(c.Call("CLIENT", "SETNAME", "slow-client"));
        RespAssert.Ok(c.Call("SET", "slow-key", "slow-value"));
        using var admin = new ApiClient(server.HttpPort, Password);
        using var watcher = Basic(server.HttpPort, "watcher", WatcherPassword);

        // What the watcher's views say of the slow calls: which commands, never which client (its address and name are the client list's).
        var watched = System.Text.Json.JsonSerializer.Deserialize(await watcher.GetStringAsync("/api/slowlog/summary"), ContractsJson.Default.SlowLogSummary)!;
        Assert.Contains(watched.Commands, command => command.Command == "set");
        Assert.Empty(watched.Clients);
        Assert.Contains(admin.Get("/api/slowlog/summary", ContractsJson.Default.SlowLogSummary).Clients, client => client.Name == "slow-client");
        // ... and the doctor, run over what the login may see, names no client either.
        var watcherFinding = Assert.Single(System.Text.Json.JsonSerializer.Deserialize(await watcher.GetStringAsync("/api/doctor"), ContractsJson.Default.DoctorReport)!.Findings,
            finding => finding.Rule == "slow-commands");
        Assert.DoesNotContain("slow-client", watcherFinding.Seen);
        Assert.DoesNotContain("127.0.0.1:", watcherFinding.Seen);
        Assert.Contains("slow-client", Assert.Single(admin.Get("/api/doctor", ContractsJson.Default.DoctorReport).Findings, finding => finding.Rule == "slow-commands").Seen);

        // The watcher's package: what watch shows, and a manifest naming each part left out and the rule that would add it.
        var (partial, partialManifest) = Package(await watcher.GetByteArrayAsync("/api/debug/package"));
        Assert.Equal("user 'watcher'", partialManifest.TakenBy);
        var omitted = partialManifest.Omitted.ToDictionary(o => o.Name);
        foreach (var (name, permission, rule) in new[]
        {
            ("clients.json", "clients", "+client|list"), ("clients-closed.json", "clients", "+client|list"), ("slowlog.json", "slowlog", "+slowlog|get"),
            ("keyspace.json", "keys", "+scan"), ("hotkeys.json", "keys", "+scan"), ("config.json", "config", "+config|get"), ("acl-log.json", "acl-log", "+acl|log"),
        })
        {
            Assert.True(omitted.TryGetValue(name, out var omission), $"{name} is named as left out: {string.Join(", ", omitted.Keys)}");
            Assert.Equal(permission, omission!.Permissions);
            Assert.Equal(rule, omission.Rules);
            Assert.False(partial.ContainsKey(name), $"{name} is not in the watcher's package");
            Assert.DoesNotContain(partialManifest.Entries, e => e.Name == name);
        }
        foreach (string kept in new[] { "info.json", "history.json", "threads.json", "doctor.json" })
            Assert.True(partial.ContainsKey(kept), $"{kept} is in the watcher's package: {string.Join(", ", partial.Keys)}");
        Assert.Equal(partialManifest.Entries.Select(e => e.Name).Order(), partial.Keys.Where(k => k != PackageManifest.FileName).Order());
        foreach (var (name, text) in partial)
        {
            Assert.DoesNotContain("slow-value", text);
            Assert.DoesNotContain("slow-key", text);
            Assert.DoesNotContain("slow-client", text); // not in slowlog-summary.json or doctor.json either
        }

        // Granted +client|list over RESP, the next package has the clients too.
        RespAssert.Ok(c.Call("ACL", "SETUSER", "watcher", "+client|list"));
        var (granted, grantedManifest) = Package(await watcher.GetByteArrayAsync("/api/debug/package"));
        Assert.True(granted.ContainsKey("clients.json"));
        Assert.DoesNotContain(grantedManifest.Omitted, o => o.Name == "clients.json");
        Assert.Contains(grantedManifest.Omitted, o => o.Name == "slowlog.json");

        // A login that may see everything gets everything, and its manifest says nothing was left out.
        var (whole, wholeManifest) = Package(Bytes(admin, "/api/debug/package"));
        Assert.Empty(wholeManifest.Omitted);
        Assert.Null(wholeManifest.TakenBy);
        Assert.Contains("slow-value", whole["slowlog.json"]);
        Assert.Contains("slow-client", whole["slowlog-summary.json"]);
        Assert.True(whole.ContainsKey("config.json") && whole.ContainsKey("acl-log.json"));

        // The studio opens the partial package and the offline doctor runs over what it holds.
        using var upload = new ByteArrayContent(await watcher.GetByteArrayAsync("/api/debug/package"));
        using var opened = await watcher.PostAsync("/api/debug/package?name=partial.zip", upload);
        Assert.True(opened.IsSuccessStatusCode, $"the partial package opens: {(int)opened.StatusCode} {await opened.Content.ReadAsStringAsync()}");
    }

    private static (Dictionary<string, string> Files, PackageManifest Manifest) Package(byte[] zipBytes)
    {
        using var zip = new System.IO.Compression.ZipArchive(new MemoryStream(zipBytes));
        var files = new Dictionary<string, string>();
        foreach (var entry in zip.Entries)
        {
            using var reader = new StreamReader(entry.Open());
            files[entry.FullName] = reader.ReadToEnd();
        }
        var manifest = System.Text.Json.JsonSerializer.Deserialize(files[PackageManifest.FileName], ContractsJson.Default.PackageManifest)!;
        return (files, manifest);
    }

    [Fact]
    public void MalformedBasicCredentialsAreRefusedAsCredentials()
    {
        using var server = StartWithWatcher();
        using var anonymous = new ApiClient(server.HttpPort);
        string[] malformed =
        [
            "Basic not-base64!",
            "Basic " + Convert.ToBase64String("no-colon"u8.ToArray()),
            "Basic " + Convert.ToBase64String([0x77, 0x3A, 0xC3, 0x28]), // "w:" then invalid UTF-8
            "Basic " + Convert.ToBase64String(Encoding.UTF8.GetBytes("watcher:" + new string('x', 4000))),
            "Basic ",
        ];
        foreach (string header in malformed)
            Assert.Equal(HttpStatusCode.Unauthorized, anonymous.StatusOf(HttpMethod.Get, "/api/info", ("Authorization", header)));
        // A password may hold colons: only the first separates the user.
        using var c = server.Connect();
        RespAssert.Ok(c.Call("AUTH", Password));
        RespAssert.Ok(c.Call("ACL", "SETUSER", "colons", "on", ">a:b:c", "+info"));
        using var colons = Basic(server.HttpPort, "colons", "a:b:c");
        Assert.Equal(HttpStatusCode.OK, Send(colons, HttpMethod.Get, "/api/info").Status);
        Assert.DoesNotContain("unhandled exception", server.Output, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public void AFormSessionEndsWhenItsUserChanges()
    {
        using var server = StartWithWatcher();
        using var c = server.Connect();
        RespAssert.Ok(c.Call("AUTH", Password));

        using (var refused = StudioFormLogin.Post(server.HttpPort, "watcher", "wrong"))
            Assert.False(refused.SignedIn);
        using (var open = StudioFormLogin.Post(server.HttpPort, "open", "anything"))
            Assert.False(open.SignedIn, "a nopass user logged in through the form");

        using var session = StudioFormLogin.Post(server.HttpPort, "watcher", WatcherPassword);
        Assert.True(session.SignedIn, $"the login form answered {(int)session.Status} without a session");
        Assert.Equal(HttpStatusCode.OK, session.StatusOf("/api/info"));
        Assert.Equal(HttpStatusCode.Forbidden, session.StatusOf("/api/clients"));
        // Rules apply live: the session itself stays, what it may do follows the user.
        RespAssert.Ok(c.Call("ACL", "SETUSER", "watcher", "-info"));
        Assert.Equal(HttpStatusCode.Forbidden, session.StatusOf("/api/info"));
        RespAssert.Ok(c.Call("ACL", "SETUSER", "watcher", "+info"));
        Assert.Equal(HttpStatusCode.OK, session.StatusOf("/api/info"));
        // A new password, as after a leak, ends every session of the user.
        RespAssert.Ok(c.Call("ACL", "SETUSER", "watcher", "resetpass", ">rotated-pw"));
        Assert.Equal(HttpStatusCode.Unauthorized, session.StatusOf("/api/info"));

        using var again = StudioFormLogin.Post(server.HttpPort, "watcher", "rotated-pw");
        Assert.True(again.SignedIn);
        Assert.Equal(HttpStatusCode.OK, again.StatusOf("/api/info"));
        RespAssert.Ok(c.Call("ACL", "SETUSER", "watcher", "off"));
        Assert.Equal(HttpStatusCode.Unauthorized, again.StatusOf("/api/info"));
        RespAssert.Ok(c.Call("ACL", "SETUSER", "watcher", "on"));
        using var third = StudioFormLogin.Post(server.HttpPort, "watcher", "rotated-pw");
        Assert.Equal(HttpStatusCode.OK, third.StatusOf("/api/info"));
        RespAssert.Integer(1, c.Call("ACL", "DELUSER", "watcher"));
        Assert.Equal(HttpStatusCode.Unauthorized, third.StatusOf("/api/info"));
        // A user by the same name made again is not the session's user.
        RespAssert.Ok(c.Call("ACL", "SETUSER", "watcher", "on", ">other-pw", "+@all"));
        Assert.Equal(HttpStatusCode.Unauthorized, third.StatusOf("/api/info"));

        // An empty user is the API key or the default user's password, as before there were users.
        using var byPassword = StudioFormLogin.Post(server.HttpPort, "", Password);
        Assert.True(byPassword.SignedIn);
        Assert.Equal(HttpStatusCode.OK, byPassword.StatusOf("/api/clients"));
    }

    [Fact]
    public void TheApiKeyHasItsOwnScope()
    {
        const string key = "scraper-key-19";
        using var server = StartWithWatcher("--http-api-key", key, "--http-api-key-scope", "watch");
        using var scraper = new ApiClient(server.HttpPort, key);
        Assert.Contains("redis_connected_clients", scraper.GetText("/metrics"));
        using (var response = scraper.Send(new HttpRequestMessage(HttpMethod.Get, "/api/clients")))
        {
            Assert.Equal(HttpStatusCode.Forbidden, response.StatusCode);
            Assert.Equal("The API key's scope (http-api-key-scope) does not include clients, needed to use /api/clients.\n",
                Text(response));
        }
        using var c = server.Connect();
        RespAssert.Ok(c.Call("AUTH", Password));
        RespAssert.BulkArray(c.Call("CONFIG", "GET", "http-api-key-scope"), "http-api-key-scope", "watch");
        RespAssert.Ok(c.Call("CONFIG", "SET", "http-api-key-scope", "watch clients"));
        Assert.Equal(HttpStatusCode.OK, scraper.StatusOf(HttpMethod.Get, "/api/clients"));
        var bad = c.Call("CONFIG", "SET", "http-api-key-scope", "watch everything");
        Assert.Equal("ERR CONFIG SET failed (possibly related to argument 'http-api-key-scope') - unknown permission 'everything' (known: watch clients kill-clients slowlog keys config acl-log script-source, all)", bad.Text);
        RespAssert.Ok(c.Call("CONFIG", "SET", "http-api-key-scope", "all"));
        RespAssert.BulkArray(c.Call("CONFIG", "GET", "http-api-key-scope"), "http-api-key-scope", "all");
        Assert.Equal(HttpStatusCode.OK, scraper.StatusOf(HttpMethod.Get, "/api/debug/packages"));
        // A session opened with the key ends when the key is replaced.
        using var session = StudioFormLogin.Post(server.HttpPort, "", key);
        Assert.True(session.SignedIn);
        Assert.Equal(HttpStatusCode.OK, session.StatusOf("/api/config"));
        RespAssert.Ok(c.Call("CONFIG", "SET", "http-api-key", "replaced-key-20"));
        Assert.Equal(HttpStatusCode.Unauthorized, session.StatusOf("/api/config"));
    }

    [Fact]
    public void WithoutALoginTheDefaultUsersRulesApply()
    {
        // Loopback, no key, a default user without a password: no login, and the default user's rules.
        using var server = ServerProcess.Start();
        using var anonymous = new ApiClient(server.HttpPort);
        using var c = server.Connect();
        Assert.Equal(HttpStatusCode.NotFound, anonymous.StatusOf(HttpMethod.Post, "/api/clients/999999/kill"));
        RespAssert.Ok(c.Call("ACL", "SETUSER", "default", "-client|kill"));
        using (var response = anonymous.Send(HttpMethod.Post, "/api/clients/999999/kill", null))
        {
            Assert.Equal(HttpStatusCode.Forbidden, response.StatusCode);
            Assert.Contains("The ACL default user may not use /api/clients/{id:long}/kill: that needs +client|kill", Text(response));
        }
        Assert.Equal(HttpStatusCode.OK, anonymous.StatusOf(HttpMethod.Get, "/api/info"));
        // A password for the default user, set by ACL rather than requirepass, closes the API too.
        RespAssert.Ok(c.Call("ACL", "SETUSER", "default", ">now-protected"));
        anonymous.AssertAsksForCredentials("/api/info");
        using var keyed = new ApiClient(server.HttpPort, "now-protected");
        Assert.Equal(HttpStatusCode.OK, keyed.StatusOf(HttpMethod.Get, "/api/info"));
    }
}
