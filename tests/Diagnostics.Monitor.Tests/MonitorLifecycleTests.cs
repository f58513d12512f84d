using System.Globalization;
using System.Net;
using System.Text;
using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Monitor;

/// <summary>
/// The monitor's contract with the machine and the server: it refuses to run unprivileged, it
/// leaves no tracefs instance behind (after a clean stop, and after kill -9 once the next monitor
/// starts), it exits when the server it was given by pid exits, and the server takes pushes only
/// with the token from its announcement file.
/// </summary>
[Collection(MonitorCollection.Name)]
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class MonitorLifecycleTests
{
    private const string Instances = "/sys/kernel/tracing/instances";

    [Fact]
    public void RefusesToRunWithoutElevationAndSaysWhatItNeeds()
    {
        using var monitor = MonitorProcess.Start(["--pid", "1"], asUser: 65534);
        Assert.True(monitor.WaitForExit(TimeSpan.FromSeconds(30)), "the unprivileged monitor did not exit");
        Assert.Equal(3, monitor.ExitCode);
        Assert.Contains("must run as root (it runs as uid 65534)", monitor.Output);
        Assert.Contains("tracefs", monitor.Output);
    }

    [Fact]
    public void LeavesNoTracefsInstanceAfterStopOrAfterKill9AndRestart()
    {
        using var server = ServerProcess.Start();
        string pid = server.Pid.ToString(CultureInfo.InvariantCulture);
        using var api = new ApiClient(server.HttpPort);

        using (var monitor = MonitorProcess.Start(["--pid", pid, "--no-runtime"]))
        {
            MonitorProbe.WaitAttached(api, monitor);
            Assert.NotEmpty(InstancesOf(monitor.Pid));
            monitor.Stop();
            Assert.Empty(InstancesOf(monitor.Pid));
        }

        int killedPid;
        using (var monitor = MonitorProcess.Start(["--pid", pid, "--no-runtime"]))
        {
            MonitorProbe.WaitAttached(api, monitor);
            killedPid = monitor.Pid;
            monitor.KillHard();
            Assert.NotEmpty(InstancesOf(killedPid)); // nothing could clean up after SIGKILL
        }
        using (var next = MonitorProcess.Start(["--pid", pid, "--no-runtime"]))
        {
            MonitorProbe.WaitAttached(api, next);
            Assert.Empty(InstancesOf(killedPid));
            Assert.Contains($"diagnostics-monitor-{killedPid}-syscalls", next.Output);
            next.Stop();
            Assert.Empty(InstancesOf(next.Pid));
        }
    }

    [Fact]
    public void ExitsWhenTheServerItWasGivenByPidExits()
    {
        var server = ServerProcess.Start();
        using var api = new ApiClient(server.HttpPort);
        using var monitor = MonitorProcess.Start(["--pid", server.Pid.ToString(CultureInfo.InvariantCulture), "--no-runtime", "--no-block"]);
        MonitorProbe.WaitAttached(api, monitor);
        server.Dispose();
        Assert.True(monitor.WaitForExit(TimeSpan.FromSeconds(15)), "the monitor outlived its server:\n" + monitor.Output);
        Assert.Equal(0, monitor.ExitCode);
        Assert.Empty(InstancesOf(monitor.Pid));
    }

    [Fact]
    public void FollowsAServerByPortAcrossARestartThenGivesUpWhenItStaysAway()
    {
        int port = ServerProcess.FreePort();
        string portText = port.ToString(CultureInfo.InvariantCulture);
        var first = ServerProcess.Start("--port", portText);
        // 20 s: the gap it must bridge includes the second server's start-up, which took over 5 s
        // at a load average of 58.
        using var monitor = MonitorProcess.Start(["--port", portText, "--no-runtime", "--no-block", "--give-up-after", "20"]);
        using (var api = new ApiClient(first.HttpPort))
            MonitorProbe.WaitAttached(api, monitor);
        ExternalTool.RedisCli(port, "SHUTDOWN");
        Poll.Until(() => first.HasExited, "the first server to shut down");
        first.Dispose();

        using (var second = ServerProcess.Start("--port", portText))
        {
            using var api = new ApiClient(second.HttpPort);
            var report = MonitorProbe.WaitAttached(api, monitor);
            Assert.Equal(second.Pid, report.Status!.ServerPid);
            Assert.Single(InstancesOf(monitor.Pid));
            ExternalTool.RedisCli(port, "SHUTDOWN");
            Poll.Until(() => second.HasExited, "the second server to shut down");
        }
        Assert.True(monitor.WaitForExit(TimeSpan.FromSeconds(60)), "the monitor did not give up on a server gone for good:\n" + monitor.Output);
        Assert.Equal(0, monitor.ExitCode);
        Assert.Contains("gone for good", monitor.Output);
        Assert.Empty(InstancesOf(monitor.Pid));
    }

    [Fact]
    public void IngestNeedsTheAnnouncedTokenAndTheAnnouncementIsForItsOwnerOnly()
    {
        using var server = ServerProcess.Start();
        using var api = new ApiClient(server.HttpPort);
        Assert.StartsWith("never attached", MonitorProbe.Report(api).State);

        string path = "";
        foreach (string directory in AnnouncementDirectories.Candidates(0, Environment.GetEnvironmentVariable))
            if (File.Exists(path = Path.Combine(directory, AnnouncementDirectories.FileName(server.Pid))))
                break;
        Assert.True(File.Exists(path), $"no announcement at {path}:\n{server.Output}");
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(path));
        var announcement = System.Text.Json.JsonSerializer.Deserialize(File.ReadAllText(path), ContractsJson.Default.MonitorAnnouncement)!;
        Assert.Equal(server.Pid, announcement.Pid);
        Assert.Equal(server.Port, announcement.Port);

        using var forged = new HttpRequestMessage(HttpMethod.Post, MonitorAnnouncement.IngestPath) { Content = new StringContent("{}", Encoding.UTF8, "application/json") };
        forged.Headers.Add(MonitorAnnouncement.TokenHeader, new string('0', 64));
        using var refused = api.Send(forged);
        Assert.Equal(HttpStatusCode.Unauthorized, refused.StatusCode);
        Assert.Equal(1, MonitorProbe.Report(api).RejectedBatches);

        Assert.DoesNotContain(announcement.Token, api.GetText("/api/config"));
        ExternalTool.RedisCli(server.Port, "SHUTDOWN");
        Poll.Until(() => server.HasExited, "the server to shut down");
        Assert.False(File.Exists(path), "the announcement outlived its server");
    }

    private static string[] InstancesOf(int monitorPid) =>
        Directory.Exists(Instances) ? Directory.GetDirectories(Instances, $"diagnostics-monitor-{monitorPid}-*") : [];
}
