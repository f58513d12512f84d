using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// CONFIG SET dir while the AOF is on, as Redis 7 handles it: writes go on to the open files in
/// the old directory, DEBUG RELOAD loads what they hold (never an empty dataset), and a rewrite
/// moves the AOF to the new directory. Afterwards the new directory holds everything, writes go
/// there, and the old one is a complete AOF as of the move: a restart on either dir loads data.
/// </summary>
public sealed class AofDirChangeTests
{
    [Fact]
    public void ChangingDirKeepsTheDataAndTheNextRewriteMovesTheAof()
    {
        using var oldDir = new TempDirectory("aof-dir-old-");
        using var newDir = new TempDirectory("aof-dir-new-");
        // As in Redis 7, CONFIG SET dir needs enable-protected-configs yes (or local).
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", oldDir.Path, "--enable-protected-configs", "yes"))
        using (var c = server.Connect())
        {
            for (int i = 1; i <= 5; i++)
                RespAssert.Ok(c.Call("SET", $"k{i}", $"v{i}"));
            RespAssert.Ok(c.Call("CONFIG", "SET", "dir", newDir.Path));
            RespAssert.Ok(c.Call("SET", "k6", "v6"));

            // Before the move completes, or after: either way the reload finds every key.
            RespAssert.Ok(c.Call("DEBUG", "LOADAOF"));
            RespAssert.Integer(6, c.Call("DBSIZE"));
            RespAssert.Bulk("v1", c.Call("GET", "k1"));
            RespAssert.Bulk("v6", c.Call("GET", "k6"));

            // A rewrite moves the AOF (the server starts one itself on the change of dir).
            var started = c.Call("BGREWRITEAOF");
            Assert.True(!started.IsError || started.Text!.Contains("already in progress"), $"BGREWRITEAOF: {started}");
            Poll.Until(() => InfoFields.Get(c, "persistence", "aof_rewrite_in_progress") == "0"
                    && File.Exists(Path.Combine(newDir.AppendDirectory, "appendonly.aof.manifest")),
                () => $"the AOF never moved to the new dir:\n{server.Output}", timeoutMs: 30_000);
            Assert.Equal("ok", InfoFields.Get(c, "persistence", "aof_last_bgrewrite_status"));
            Assert.Equal("ok", InfoFields.Get(c, "persistence", "aof_last_write_status"));

            RespAssert.Ok(c.Call("SET", "k7", "v7"));
            RespAssert.Ok(c.Call("DEBUG", "LOADAOF"));
            RespAssert.Integer(7, c.Call("DBSIZE"));
            RespAssert.Bulk("v7", c.Call("GET", "k7"));
            // A second rewrite in the new place works too.
            RespAssert.Simple("Background append only file rewriting started", c.Call("BGREWRITEAOF"));
            Poll.Until(() => InfoFields.Get(c, "persistence", "aof_rewrite_in_progress") == "0",
                () => $"the rewrite in the new dir never finished:\n{server.Output}", timeoutMs: 30_000);
            Assert.Equal("ok", InfoFields.Get(c, "persistence", "aof_last_bgrewrite_status"));
            server.KillHard();
        }

        AofRestart.AssertLoads(newDir.Path, 7, [.. Enumerable.Range(1, 7).Select(i => ($"k{i}", (string?)$"v{i}"))]);
        // The old directory was left whole, as of the move: all six keys written before it.
        AofRestart.AssertLoads(oldDir.Path, 6, ("k6", "v6"));
    }

    /// <summary>A new path to the same directory (a symlink) moves nothing: copying the files onto themselves would empty them.</summary>
    [Fact]
    public void ChangingDirToAnotherPathOfTheSameDirectoryKeepsTheFiles()
    {
        using var dir = new TempDirectory("aof-dir-same-");
        using var links = new TempDirectory("aof-dir-link-");
        string link = Path.Combine(links.Path, "same");
        Directory.CreateSymbolicLink(link, dir.Path);
        int acknowledged = 0;
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path, "--enable-protected-configs", "yes"))
        using (var c = server.Connect())
        {
            for (int i = 1; i <= 5; i++)
                RespAssert.Ok(c.Call("SET", $"k{i}", $"v{i}"));
            // Writes all through the rewrite, so some land in the incremental file it would copy.
            var stop = new ManualResetEventSlim();
            var writer = new Thread(() =>
            {
                using var w = server.Connect();
                for (int i = 0; !stop.IsSet; i++)
                {
                    RespAssert.Ok(w.Call("SET", $"w{i}", $"{i}"));
                    Interlocked.Increment(ref acknowledged);
                }
            }) { IsBackground = true, Name = "aof dir-change writer" };
            writer.Start();
            RespAssert.Ok(c.Call("CONFIG", "SET", "dir", link));
            var started = c.Call("BGREWRITEAOF");
            Assert.True(!started.IsError || started.Text!.Contains("already in progress"), $"BGREWRITEAOF: {started}");
            Poll.Until(() => InfoFields.Get(c, "persistence", "aof_rewrite_in_progress") == "0",
                () => $"the rewrite never finished:\n{server.Output}", timeoutMs: 30_000);
            stop.Set();
            Assert.True(writer.Join(TimeSpan.FromSeconds(30)), "the writer did not stop");
            RespAssert.Ok(c.Call("DEBUG", "LOADAOF"));
            RespAssert.Integer(5 + acknowledged, c.Call("DBSIZE"));
            server.KillHard();
        }
        AofRestart.AssertLoads(dir.Path, 5 + acknowledged, ($"w{acknowledged - 1}", $"{acknowledged - 1}"));
    }
}
