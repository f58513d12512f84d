using System.IO.Compression;
using System.Text.Json;
using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Scripting;

/// <summary>
/// Scripts in the server's own diagnostics: INFO scripts names each script and function with its
/// calls, time and slowest run; a script running past busy-reply-threshold is in-flight work under
/// its SHA1, and the doctor names it live; GET /api/scripts and the debug package list the scripts
/// with their stats, their source only when an operator asks (never in the package).
/// </summary>
public sealed class ScriptDiagnosticsTests
{
    // The token is in the source only: no command the script runs carries it.
    private const string Secret = "local token = 'token-9f1c2e' redis.call('set', KEYS[1], #token) return 1";

    [Fact]
    public async Task ScriptsAreNamedInInfoTheApiThePackageAndTheDoctor()
    {
        using var server = ServerProcess.Start("--busy-reply-threshold", "300");
        using var c = server.Connect();
        using var runner = server.Connect();
        string sha = c.Call("SCRIPT", "LOAD", Secret).Text!;
        for (int i = 0; i < 3; i++)
            RespAssert.Integer(1, c.Call("EVALSHA", sha, "1", "k"));
        Assert.True(c.Call("EVAL", "return redis.call('lpush', 'k', 'x')", "0").IsError); // WRONGTYPE: a failed call
        RespAssert.Bulk("lib", c.Call("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('hello', function() return 'hi' end)"));
        RespAssert.Bulk("hi", c.Call("FCALL", "hello", "0"));

        var info = InfoFields.Read(c, "scripts");
        Assert.StartsWith("calls=3,usec=", info["script_" + sha]);
        Assert.Contains(",failed_calls=0,max_usec=", info["script_" + sha]);
        Assert.Contains(",failed_calls=1,", info.Single(f => f.Key.StartsWith("script_", StringComparison.Ordinal) && f.Key != "script_" + sha
            && f.Key.Length == "script_".Length + 40).Value);
        Assert.StartsWith("calls=1,", info["function_hello"]);
        Assert.EndsWith(",library=lib", info["function_hello"]);
        Assert.Equal("0", info["busy_scripts_total"]);

        using var api = new ApiClient(server.HttpPort);
        var report = api.Get("/api/scripts", ContractsJson.Default.ScriptReport);
        var loaded = Assert.Single(report.Scripts, s => s.Name == sha);
        Assert.Equal(3, loaded.Calls);
        Assert.Null(loaded.Source);
        Assert.Contains(report.Scripts, s => s is { Kind: "function", Name: "hello", Library: "lib", Calls: 1 });
        Assert.True(report.EvalVmBytes > 0 && report.FunctionsVmBytes > 0);
        Assert.Equal(Secret, api.Get("/api/scripts?source=true", ContractsJson.Default.ScriptReport).Scripts.Single(s => s.Name == sha).Source);

        // A runaway script: in flight under its name, named by the doctor, then killed.
        runner.Send("EVAL", "local i = 0 while true do i = i + 1 end", "0");
        var busy = DoctorProbe.Expect(server, "busy-script", until: f => f.Severity == FindingSeverity.Critical);
        string loopSha = busy.Evidence["script"];
        Assert.Equal(40, loopSha.Length);
        Assert.Contains("sha " + loopSha, busy.Seen);
        var inFlight = api.Get("/api/inflight", ContractsJson.Default.InFlightWorkArray);
        Assert.Contains(inFlight, w => w.Activity == "script " + loopSha);
        var running = api.Get("/api/scripts", ContractsJson.Default.ScriptReport).Running;
        Assert.True(running is { Busy: true } && running.Name == loopSha);
        RespAssert.Ok(c.Call("SCRIPT", "KILL"));
        Assert.StartsWith("ERR Script killed by user with SCRIPT KILL", runner.Read().Text);
        var after = DoctorProbe.Expect(server, "busy-script", until: f => f.Severity == FindingSeverity.Warning);
        Assert.Contains("sha " + loopSha, after.Seen);
        Assert.Equal("1", InfoFields.Get(c, "scripts", "killed_scripts_total"));

        // The package lists the scripts and their stats, and holds no source.
        using var response = await api.Http.GetAsync("/api/debug/package");
        using var zip = new ZipArchive(new MemoryStream(await response.Content.ReadAsByteArrayAsync()), ZipArchiveMode.Read);
        using var entry = zip.GetEntry("scripts.json")!.Open();
        var packaged = JsonSerializer.Deserialize(entry, ContractsJson.Default.ScriptReport)!;
        Assert.Equal(3, packaged.Scripts.Single(s => s.Name == sha).Calls);
        Assert.All(packaged.Scripts, s => Assert.Null(s.Source));
        foreach (var file in zip.Entries)
        {
            using var reader = new StreamReader(file.Open());
            string text = await reader.ReadToEndAsync();
            Assert.False(text.Contains("token-9f1c2e", StringComparison.Ordinal), $"{file.Name} holds the script's source");
        }
        // The slow log names the runaway script; its source is left out of the view (SLOWLOG GET still has it, as Redis's).
        var slow = api.Get("/api/slowlog", ContractsJson.Default.SlowLogRecordArray);
        var killedEntry = Assert.Single(slow, r => r.Script == loopSha);
        Assert.Equal(["EVAL", "(source not shown)", "0"], killedEntry.Arguments);
    }
}
