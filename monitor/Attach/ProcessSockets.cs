using System.Globalization;
using System.Net;
using Diagnostics.Monitor.Linux;

namespace Diagnostics.Monitor.Attach;

/// <summary>
/// The listening sockets a process really holds: the TCP and unix listeners of its network
/// namespace (/proc/PID/net/tcp, tcp6, unix) kept only where the socket's inode is one of the
/// process's own descriptors (/proc/PID/fd, "socket:[inode]"). A file can claim any pid and port;
/// only the pid itself can hold the socket.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class ProcessSockets
{
    private const string Listen = "0A";
    // /proc/net/unix's Flags column for a socket that listen(2)ed (__SO_ACCEPTCON).
    private const string Accepting = "00010000";

    private readonly int _pid;
    private readonly HashSet<string> _owned;
    private readonly List<(IPAddress Address, int Port, string Inode)> _tcpListeners;

    private ProcessSockets(int pid, HashSet<string> owned, List<(IPAddress, int, string)> tcpListeners)
    {
        _pid = pid;
        _owned = owned;
        _tcpListeners = tcpListeners;
    }

    public static ProcessSockets Read(int pid)
    {
        var owned = new HashSet<string>(StringComparer.Ordinal);
        try
        {
            foreach (string fd in Directory.EnumerateFileSystemEntries($"/proc/{pid}/fd"))
            {
                string? link = TryLinkTarget(fd);
                if (link is not null && link.StartsWith("socket:[", StringComparison.Ordinal))
                    owned.Add(link["socket:[".Length..^1]);
            }
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
        }
        var listeners = new List<(IPAddress, int, string)>();
        foreach (string table in (ReadOnlySpan<string>)["tcp", "tcp6"])
            foreach (var fields in Rows($"/proc/{pid}/net/{table}"))
                // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
                if (fields.Length > 9 && fields[3] == Listen)
                {
                    var endpoint = DescriptorNames.ParseEndpoint(fields[1]);
                    listeners.Add((endpoint.Address, endpoint.Port, fields[9]));
                }
        return new ProcessSockets(pid, owned, listeners);
    }

    /// <summary>Whether the process listens on <paramref name="port"/> on any address.</summary>
    public bool ListensOn(int port) => _tcpListeners.Exists(l => l.Port == port && _owned.Contains(l.Inode));

    /// <summary>
    /// Why a connection to <paramref name="address"/>:<paramref name="port"/> might not reach this
    /// process, or null when it must: at least one listener that would take it is the process's,
    /// and none is anyone else's.
    /// </summary>
    public string? WhyNotReached(IPAddress address, int port)
    {
        bool ours = false;
        IPAddress? foreign = null;
        foreach (var listener in _tcpListeners)
        {
            if (listener.Port != port || !Takes(listener.Address, address))
                continue;
            if (_owned.Contains(listener.Inode))
                ours = true;
            else
                foreign ??= listener.Address;
        }
        if (!ours)
            return $"pid {_pid.ToString(CultureInfo.InvariantCulture)} does not listen on {Format(address, port)}";
        return foreign is null ? null : $"another process's socket also listens on {Format(foreign, port)}";
    }

    /// <summary>Whether one of the process's listening unix sockets is bound to <paramref name="realPath"/> (links resolved).</summary>
    public bool ListensOnUnix(string realPath)
    {
        string name = Path.GetFileName(realPath);
        foreach (var fields in Rows($"/proc/{_pid}/net/unix"))
        {
            // Num RefCount Protocol Flags Type St Inode Path
            if (fields.Length < 8 || fields[3] != Accepting || !_owned.Contains(fields[6]) || Path.GetFileName(fields[7]) != name)
                continue;
            string? folder = Path.GetDirectoryName(fields[7]);
            if (folder is not null && FolderTrust.RealPath(folder) is { } realFolder && Path.Combine(realFolder, name) == realPath)
                return true;
        }
        return false;
    }

    /// <summary>Whether a listener bound to <paramref name="bound"/> takes connections to <paramref name="target"/>.</summary>
    private static bool Takes(IPAddress bound, IPAddress target)
    {
        if (bound.IsIPv4MappedToIPv6)
            bound = bound.MapToIPv4();
        if (bound.Equals(target))
            return true;
        if (bound.Equals(IPAddress.Any))
            return target.AddressFamily == System.Net.Sockets.AddressFamily.InterNetwork;
        // [::] takes IPv4 too unless IPV6_V6ONLY, which /proc does not show: counted as taking it.
        return bound.Equals(IPAddress.IPv6Any);
    }

    private static string Format(IPAddress address, int port) => new IPEndPoint(address, port).ToString();

    private static string? TryLinkTarget(string path)
    {
        try
        {
            return new FileInfo(path).LinkTarget;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    /// <summary>A /proc table's rows split into fields, without its heading line.</summary>
    private static IEnumerable<string[]> Rows(string path)
    {
        string[] lines;
        try
        {
            lines = File.ReadAllLines(path);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            yield break;
        }
        for (int i = 1; i < lines.Length; i++)
            yield return lines[i].Split(' ', StringSplitOptions.RemoveEmptyEntries);
    }
}
