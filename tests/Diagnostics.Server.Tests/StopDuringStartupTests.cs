using System.Diagnostics;
using System.Text;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// A stop at any moment is an orderly stop, as with redis-server: SIGTERM (or SHUTDOWN once the
/// RESP port answers) while the server is still starting (loading its AOF, binding the HTTP
/// listener, just after the RESP port opened) ends it with exit code 0, no unhandled exception,
/// and an AOF that loads whole afterwards. Each case stops fresh servers after a range of delays.
///
/// "After start" counts from the moment the process runs the server's code: before that the .NET
/// host and runtime are still booting (0.1 to 0.5 s here), no program code can act on a signal,
/// and SIGTERM ends the process as the runtime's default does (exit 143). The sign is the
/// server's first line ("... is starting", as Redis prints), written right after it registers
/// for SIGTERM; the runtime's own signal handlers (SIGCONT in /proc/pid/status) appear earlier,
/// before Main, so they cannot tell (a SIGTERM sent on that sign exited 143 in a full-suite run).
/// </summary>
public sealed class StopDuringStartupTests
{
    private const string StartingLine = "Diagnostics.Server is starting";

    public enum Stop { SigtermAfterStart, SigtermAfterPortOpens, ShutdownAfterPortOpens }

    [Theory]
    [InlineData(Stop.SigtermAfterStart, new[] { 0, 0, 50, 150, 300, 500 })]
    [InlineData(Stop.SigtermAfterPortOpens, new[] { 0, 0, 20, 50, 100, 200, 400 })]
    [InlineData(Stop.ShutdownAfterPortOpens, new[] { 0, 0, 50, 150 })]
    public void StopWhileStartingEndsInOrder(Stop stop, int[] delaysMs)
    {
        var failures = new StringBuilder();
        for (int run = 0, attempt = 1; run < delaysMs.Length; run++)
        {
            int delay = delaysMs[run];
            using var dir = new TempDirectory();
            using var server = ServerProcess.Launch("--appendonly", "yes", "--dir", dir.Path);
            var clock = Stopwatch.StartNew();
            if (stop == Stop.SigtermAfterStart)
                WaitForServerCode(server);
            else
                WaitForPort(server);
            Thread.Sleep(delay);
            long stoppedAtMs = clock.ElapsedMilliseconds;
            if (stop == Stop.ShutdownAfterPortOpens)
            {
                using var client = server.Connect();
                client.Send("SHUTDOWN");
                Assert.True(server.WaitForExit(TimeSpan.FromSeconds(60)), $"SHUTDOWN {delay} ms after the port opened: still running after 60 s\n{server.Output}");
            }
            else
            {
                Assert.True(server.Terminate(TimeSpan.FromSeconds(60)), $"SIGTERM after {delay} ms: still running after 60 s\n{server.Output}");
            }
            // A port found free can be taken (by another test's outgoing connection) before the
            // server binds it: that run says nothing about stopping, so it runs again.
            if (server.Output.Contains("address already in use", StringComparison.OrdinalIgnoreCase) && attempt++ < 3)
            {
                run--;
                continue;
            }
            attempt = 1;
            Check(failures, $"{stop} +{delay} ms (stopped {stoppedAtMs} ms after launch)", server);
        }
        Assert.True(failures.Length == 0, failures.ToString());
    }

    /// <summary>
    /// SIGTERM while a large AOF loads: the server stops without serving (or after, if the load won
    /// the race), exits 0, and leaves the files as they were: the next start loads every key.
    /// </summary>
    [Fact]
    public void SigtermWhileTheAofLoadsEndsInOrderAndKeepsTheFile()
    {
        using var dir = new TempDirectory();
        const int Keys = 300_000;
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            // Large pipelined writes: the AOF then takes a noticeable time to load.
            var batch = new string[1000][];
            for (int start = 0; start < Keys; start += batch.Length)
            {
                for (int i = 0; i < batch.Length; i++)
                    batch[i] = ["SET", $"load:{start + i}", "v"];
                c.SendRaw(RespClient.EncodeAll(batch));
                for (int i = 0; i < batch.Length; i++)
                    c.Read();
            }
            c.Send("SHUTDOWN");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(60)));
        }

        var failures = new StringBuilder();
        foreach (int delay in new[] { 0, 200, 500 })
        {
            using var server = ServerProcess.Launch("--appendonly", "yes", "--dir", dir.Path);
            WaitForServerCode(server);
            Thread.Sleep(delay);
            Assert.True(server.Terminate(TimeSpan.FromSeconds(60)), $"SIGTERM after {delay} ms: still running after 60 s\n{server.Output}");
            Check(failures, $"SIGTERM +{delay} ms with a {Keys}-key AOF", server);
        }
        Assert.True(failures.Length == 0, failures.ToString());

        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
            RespAssert.Integer(Keys, c.Call("DBSIZE"));
    }

    /// <summary>Until the server's first line, which it prints once its stop signals are in place.</summary>
    private static void WaitForServerCode(ServerProcess server)
    {
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while (!server.Output.Contains(StartingLine, StringComparison.Ordinal))
        {
            Assert.False(server.HasExited, $"the server exited while starting\n{server.Output}");
            Assert.True(DateTime.UtcNow < deadline, $"the server printed no start line within 60 s\n{server.Output}");
            Thread.Sleep(2);
        }
    }

    private static void WaitForPort(ServerProcess server)
    {
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while (!server.AcceptsConnections)
        {
            Assert.False(server.HasExited, $"the server exited before its port opened\n{server.Output}");
            Assert.True(DateTime.UtcNow < deadline, $"the port did not open within 60 s\n{server.Output}");
            Thread.Sleep(5);
        }
    }

    private static void Check(StringBuilder failures, string what, ServerProcess server)
    {
        string output = server.Output;
        if (server.ExitCode == 0 && !output.Contains("Unhandled exception", StringComparison.Ordinal)
            && !output.Contains("Hosting failed to start", StringComparison.Ordinal))
            return;
        string tail = output.Length > 1500 ? output[^1500..] : output;
        failures.Append(what).Append(": exit code ").Append(server.ExitCode).Append('\n').Append(tail).Append("\n---\n");
    }
}
