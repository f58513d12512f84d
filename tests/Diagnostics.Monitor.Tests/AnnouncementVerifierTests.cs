using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text.Json;
using Diagnostics.Contracts;
using Diagnostics.Monitor.Attach;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Monitor;

/// <summary>
/// Each check the root monitor makes before it trusts an announcement or a diagnostic socket, on
/// real files and a real server: the server's own announcement and socket pass, and a copy that
/// differs in one way (a mode, a link, a port, a URL, a folder above) is refused with a reason
/// that names what is wrong.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class AnnouncementVerifierTests
{
    private const UnixFileMode OwnerOnly = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute;
    private const UnixFileMode OpenToAll = OwnerOnly | UnixFileMode.GroupRead | UnixFileMode.GroupWrite | UnixFileMode.GroupExecute
        | UnixFileMode.OtherRead | UnixFileMode.OtherWrite | UnixFileMode.OtherExecute;

    [Fact]
    public void TheServersOwnAnnouncementPassesAndEveryAlteredCopyIsRefusedWithItsReason()
    {
        MonitorProcess.RequireRoot();
        using var server = ServerProcess.Start();
        string real = AnnouncementOf(server);
        var (announcement, problem) = AnnouncementVerifier.Verify(real, _ => true);
        Assert.Null(problem);
        Assert.Equal(server.Pid, announcement!.Pid);
        var original = JsonSerializer.Deserialize(File.ReadAllText(real), ContractsJson.Default.MonitorAnnouncement)!;
        string pid = server.Pid.ToString(CultureInfo.InvariantCulture);

        using var root = new TempDirectory();
        string folder = Path.Combine(root.Path, "announcements");
        Directory.CreateDirectory(folder, OwnerOnly);
        string copy = Path.Combine(folder, "copy.json");
        Write(copy, original);
        Assert.Null(AnnouncementVerifier.Verify(copy, _ => true).Problem);
        Assert.Equal((null, null), AnnouncementVerifier.Verify(copy, _ => false));

        File.SetUnixFileMode(copy, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupWrite | UnixFileMode.OtherRead | UnixFileMode.OtherWrite);
        Assert.Equal("it is writable by others (mode 626)", AnnouncementVerifier.Verify(copy, _ => true).Problem);
        File.Delete(copy);

        File.CreateSymbolicLink(copy, real);
        Assert.Equal("it is a symbolic link", AnnouncementVerifier.Verify(copy, _ => true).Problem);
        File.Delete(copy);

        string linkedFolder = Path.Combine(root.Path, "linked");
        Directory.CreateSymbolicLink(linkedFolder, Path.GetDirectoryName(real)!);
        Assert.Equal("its folder is a symbolic link", AnnouncementVerifier.Verify(Path.Combine(linkedFolder, Path.GetFileName(real)), _ => true).Problem);

        File.SetUnixFileMode(folder, OwnerOnly | UnixFileMode.GroupWrite);
        Write(copy, original);
        Assert.Equal("its folder is writable by others (mode 720)", AnnouncementVerifier.Verify(copy, _ => true).Problem);
        File.SetUnixFileMode(folder, OwnerOnly);

        // A folder above that anyone may change: they could swap the announcement folder for theirs.
        File.SetUnixFileMode(root.Path, OpenToAll);
        Assert.Equal($"{root.Path} above its folder is writable by others and not sticky (mode 777)", AnnouncementVerifier.Verify(copy, _ => true).Problem);
        File.SetUnixFileMode(root.Path, OpenToAll | UnixFileMode.StickyBit);
        Assert.Null(AnnouncementVerifier.Verify(copy, _ => true).Problem);
        File.SetUnixFileMode(root.Path, OwnerOnly);

        int unused = ServerProcess.FreePort();
        Write(copy, original with { Port = unused });
        Assert.Equal($"pid {pid} does not listen on its announced port {unused}", AnnouncementVerifier.Verify(copy, _ => true).Problem);

        foreach (string url in (string[])["http://attacker.example:9/api/monitor/ingest", "https://127.0.0.1:9/api/monitor/ingest", $"http://127.0.0.1:{server.HttpPort}/api/config", "http://10.1.2.3:9/api/monitor/ingest"])
        {
            Write(copy, original with { IngestUrl = url });
            Assert.Equal($"its ingest URL '{url}' is not http://LOOPBACK-ADDRESS:PORT/api/monitor/ingest", AnnouncementVerifier.Verify(copy, _ => true).Problem);
        }

        // A loopback port someone else listens on.
        using (var other = new TcpListener(IPAddress.Loopback, 0))
        {
            other.Start();
            int otherPort = ((IPEndPoint)other.LocalEndpoint).Port;
            Write(copy, original with { IngestUrl = $"http://127.0.0.1:{otherPort}/api/monitor/ingest" });
            Assert.Equal($"its ingest URL does not lead to pid {pid}: pid {pid} does not listen on 127.0.0.1:{otherPort}", AnnouncementVerifier.Verify(copy, _ => true).Problem);
        }

        using (var exited = System.Diagnostics.Process.Start("true")!)
        {
            exited.WaitForExit();
            Write(copy, original with { Pid = exited.Id });
            Assert.Equal($"pid {exited.Id} is not running", AnnouncementVerifier.Verify(copy, _ => true).Problem);
        }
    }

    [Fact]
    public void OnlyTheServersOwnListeningDiagnosticSocketIsFound()
    {
        MonitorProcess.RequireRoot();
        using var server = ServerProcess.Start();
        string pid = server.Pid.ToString(CultureInfo.InvariantCulture);
        // Dead processes that once had this pid may have left their sockets in /tmp (pids wrap on a
        // busy machine): exactly one of these files is the live runtime's, the others must be ignored.
        string[] runtimes = Directory.GetFiles(Path.GetTempPath(), $"dotnet-diagnostic-{pid}-*-socket");
        Assert.NotEmpty(runtimes);

        string notASocket = Path.Combine(Path.GetTempPath(), $"dotnet-diagnostic-{pid}-2-socket");
        string strangers = Path.Combine(Path.GetTempPath(), $"dotnet-diagnostic-{pid}-1-socket");
        using var listener = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            File.WriteAllText(notASocket, "");
            listener.Bind(new UnixDomainSocketEndPoint(strangers));
            listener.Listen();

            var (socket, whyNone, ignored) = DiagnosticSocketFinder.Find(server.Pid);
            Assert.True(socket is not null && runtimes.Contains(socket), $"found {socket} ({whyNone}), not one of the runtime's {string.Join(", ", runtimes)}");
            string unbound = $"no listening socket of pid {pid} is bound to it";
            Assert.Equal(
                runtimes.Where(r => r != socket).Select(r => (r, unbound))
                    .Append((strangers, unbound)).Append((notASocket, "it is not a socket"))
                    .OrderBy(i => i.Item1, StringComparer.Ordinal),
                ignored.OrderBy(i => i.Path, StringComparer.Ordinal));
        }
        finally
        {
            File.Delete(notASocket);
            File.Delete(strangers);
        }
    }

    private static void Write(string path, MonitorAnnouncement announcement)
    {
        File.Delete(path);
        File.WriteAllText(path, JsonSerializer.Serialize(announcement, ContractsJson.Default.MonitorAnnouncement));
        File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite);
    }

    private static string AnnouncementOf(ServerProcess server)
    {
        foreach (string directory in AnnouncementDirectories.Candidates(0, Environment.GetEnvironmentVariable))
            if (File.Exists(Path.Combine(directory, AnnouncementDirectories.FileName(server.Pid))))
                return Path.Combine(directory, AnnouncementDirectories.FileName(server.Pid));
        Assert.Fail("the server wrote no announcement:\n" + server.Output);
        return "";
    }
}
