using System.Globalization;
using System.Net;
using System.Net.Sockets;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Monitor;

/// <summary>
/// The root monitor acts only on what the server's own user could not have forged. An
/// unprivileged user plants an announcement (in a folder open to all, and in a folder of its
/// own, both naming pid 1 and a push URL of the attacker's) and a diagnostic socket of its own
/// named after the real server's pid; a real server runs beside them. The monitor attaches to the
/// real server and its real socket, never pushes to the attacker or connects to its socket, and
/// says in its log which file it ignored and why.
/// </summary>
[Collection(MonitorCollection.Name)]
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class MonitorTrustTests
{
    [Fact]
    public void IgnoresForgedAnnouncementsAndAttachesToTheRealServer()
    {
        MonitorProcess.RequireRoot();
        int port = ServerProcess.FreePort();
        string portText = port.ToString(CultureInfo.InvariantCulture);
        // Where the forged announcements tell the monitor to push: any connection here is the attack working.
        using var trap = new TcpListener(IPAddress.Loopback, 0);
        trap.Start();
        int trapped = 0;
        _ = Task.Run(async () =>
        {
            while (true)
            {
                using var connection = await trap.AcceptSocketAsync();
                Interlocked.Increment(ref trapped);
            }
        });
        string forgedJson = $$"""
            {"pid":1,"port":{{port}},"ingestUrl":"http://127.0.0.1:{{((IPEndPoint)trap.LocalEndpoint).Port}}/api/monitor/ingest","token":"forged","dataDirectory":"/"}
            """;
        // The names are unique: other engineers' servers announce themselves in the same places.
        string openFolder = $"/tmp/diagnostics-server-forged-{Guid.NewGuid():N}";
        string ownFolder = $"/tmp/diagnostics-server-forged-{Guid.NewGuid():N}";
        try
        {
            // The attack as filed: a mode-777 folder and file.
            OtherUser.Run(OtherUser.Nobody, "mkdir -m 777 \"$1\" && printf '%s' \"$2\" > \"$1/1.json\" && chmod 666 \"$1/1.json\"", openFolder, forgedJson);
            // Closed folder and file, as a real server makes them, but pid 1 is not nobody's.
            OtherUser.Run(OtherUser.Nobody, "mkdir -m 700 \"$1\" && (umask 077 && printf '%s' \"$2\" > \"$1/1.json\")", ownFolder, forgedJson);

            using var monitor = MonitorProcess.Start(["--port", portText, "--no-runtime", "--no-block", "--give-up-after", "120"]);
            Poll.Until(() => monitor.Output.Contains(ownFolder, StringComparison.Ordinal) && monitor.Output.Contains(openFolder, StringComparison.Ordinal)
                || Volatile.Read(ref trapped) > 0 || monitor.HasExited, "the monitor to look at the forged announcements", 30_000);
            Assert.True(Volatile.Read(ref trapped) == 0, "the monitor pushed to the URL of a forged announcement:\n" + monitor.Output);
            Assert.DoesNotContain("Attached to server pid 1,", monitor.Output);
            Assert.False(monitor.HasExited, "the monitor exited:\n" + monitor.Output);
            Assert.Contains($"Ignored announcements in {openFolder}: its folder is writable by others (mode 777)", monitor.Output);
            Assert.Contains($"Ignored announcement {ownFolder}/1.json: its folder belongs to uid {OtherUser.Nobody}, but pid 1 runs as uid 0", monitor.Output);

            using var server = ServerProcess.Start("--port", portText);
            using var api = new ApiClient(server.HttpPort);
            var report = MonitorProbe.WaitAttached(api, monitor);
            Assert.Equal(server.Pid, report.Status!.ServerPid);
            Assert.Contains($"Attached to server pid {server.Pid},", monitor.Output);
            Assert.True(Volatile.Read(ref trapped) == 0, "the monitor pushed to the URL of a forged announcement:\n" + monitor.Output);
            monitor.Stop();
        }
        finally
        {
            foreach (string folder in (string[])[openFolder, ownFolder])
                if (Directory.Exists(folder))
                    Directory.Delete(folder, recursive: true);
        }
    }

    [Fact]
    public void IgnoresAForgedDiagnosticSocketAndOpensEventPipeOnTheServersOwn()
    {
        MonitorProcess.RequireRoot();
        using var server = ServerProcess.Start();
        // The runtime's socket is /tmp/dotnet-diagnostic-PID-KEY-socket; a client takes the newest
        // match, so a forged one made now, named for the server's pid, comes first.
        string forged = Path.Combine(Path.GetTempPath(), $"dotnet-diagnostic-{server.Pid}-1-socket");
        using var listener = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            listener.Bind(new UnixDomainSocketEndPoint(forged));
            listener.Listen();
            ExternalTool.Run("chown", "coreutils", [OtherUser.Nobody.ToString(CultureInfo.InvariantCulture), forged]);

            using var api = new ApiClient(server.HttpPort);
            using var monitor = MonitorProcess.Start(["--pid", server.Pid.ToString(CultureInfo.InvariantCulture), "--no-block"]);
            Poll.Until(() => listener.Poll(0, SelectMode.SelectRead) || monitor.HasExited
                || MonitorProbe.Report(api) is { Attached: true } report && report.Status!.Sources.Any(s => s.Name == "eventpipe" && s.State != "starting"),
                "the monitor to open its EventPipe session", 30_000);
            Assert.False(listener.Poll(0, SelectMode.SelectRead), "the monitor connected to the forged diagnostic socket:\n" + monitor.Output);
            MonitorProbe.WaitAttached(api, monitor, "eventpipe");
            Assert.Contains($"Ignored diagnostic socket {forged}: it belongs to uid {OtherUser.Nobody}, but pid {server.Pid} runs as uid 0", monitor.Output);
            monitor.Stop();
        }
        finally
        {
            File.Delete(forged);
        }
    }

    [Fact]
    public void AServerRefusesAnAnnouncementFolderAnotherUserMadeFirstAndTheMonitorFindsItsAnnouncementElsewhere()
    {
        MonitorProcess.RequireRoot();
        // The server's XDG_RUNTIME_DIR, open to all and sticky like /tmp, where nobody got first.
        using var runtime = new TempDirectory();
        File.SetUnixFileMode(runtime.Path, (UnixFileMode)0x3FF | UnixFileMode.StickyBit);
        string planted = Path.Combine(runtime.Path, "diagnostics-server");
        OtherUser.Run(OtherUser.Nobody, "mkdir -m 777 \"$1\"", planted);

        using var server = ServerProcess.StartWithEnvironment(new Dictionary<string, string> { ["XDG_RUNTIME_DIR"] = runtime.Path });
        Assert.Empty(Directory.GetFileSystemEntries(planted));
        using var api = new ApiClient(server.HttpPort);
        using var monitor = MonitorProcess.Start(["--pid", server.Pid.ToString(CultureInfo.InvariantCulture), "--no-runtime", "--no-block"]);
        var report = MonitorProbe.WaitAttached(api, monitor);
        Assert.Equal(server.Pid, report.Status!.ServerPid);
        Assert.Empty(Directory.GetFileSystemEntries(planted));
        monitor.Stop();
    }
}
