using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Replication;

/// <summary>
/// A master of ours kept busy by a script answers Sentinel's PING with -BUSY; once Sentinel holds
/// it subjectively down it sends SCRIPT KILL (sentinelPingReplyCallback), the script ends and the
/// master is up again. Nobody but the Sentinel sends SCRIPT KILL here.
/// </summary>
public sealed class SentinelBusyScriptTests
{
    [Fact]
    public void SentinelKillsAScriptThatKeepsTheMasterBusy()
    {
        using var master = ServerProcess.Start("--busy-reply-threshold", "100");
        // A quorum no single Sentinel reaches: it marks the master down (+sdown) but never fails over.
        using var sentinel = RealSentinel.Start("mymaster", master.Port, 2, "down-after-milliseconds", "1000");
        Poll.Until(() =>
        {
            using var s = sentinel.Connect();
            var state = s.Call("SENTINEL", "MASTER", "mymaster").ToMap();
            return state["flags"].Text == "master" && state["role-reported"].Text == "master";
        }, () => $"the sentinel saw the master:\n{sentinel.Output}", 15_000);

        RespValue? scriptReply = null;
        var running = new Thread(() =>
        {
            using var c = master.Connect();
            scriptReply = c.Call("EVAL", "while true do end", "0");
        })
        { IsBackground = true, Name = "busy script" };
        running.Start();

        Assert.True(running.Join(20_000), $"the script was still running after 20 s:\n{sentinel.Output}");
        Assert.True(scriptReply is { IsError: true } && scriptReply.Text!.Contains("Script killed by user with SCRIPT KILL", StringComparison.Ordinal),
            $"the script ended with {scriptReply}\n{sentinel.Output}");
        // Sentinel sends SCRIPT KILL only once it holds the master down, so +sdown was logged before
        // the script ended; its output is read asynchronously and may not have arrived yet.
        Poll.Until(() => sentinel.Output.Contains("+sdown master mymaster", StringComparison.Ordinal), () => $"+sdown in the sentinel's log:\n{sentinel.Output}", 5_000);
        using var m = master.Connect();
        Assert.Contains("cmdstat_script|kill:calls=1,", m.Call("INFO", "commandstats").Text);
        Poll.Until(() => sentinel.Output.Contains("-sdown master mymaster", StringComparison.Ordinal), () => $"the master up again for the sentinel:\n{sentinel.Output}", 10_000);
    }
}
