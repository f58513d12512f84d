using System.Globalization;
using System.Net;
using Diagnostics.Monitor.Aggregation;

namespace Diagnostics.Monitor.Linux;

/// <summary>
/// Names the server's file descriptors the first time an event uses them, from
/// /proc/PID/fd/N (a path, "socket:[inode]", "pipe:[inode]") and, for sockets, the process's
/// /proc/PID/net/tcp, tcp6 and unix tables ("tcp 127.0.0.1:6379 &lt;- 127.0.0.1:50412"). The name
/// is kept until the server closes the descriptor or opens another under the same number.
/// A descriptor closed before it could be looked at reads "fd N (closed)". A socket missing from
/// the tables (a kind they do not list, or caught mid-setup) keeps its "socket:[inode]" name for
/// a second and is then looked up again, so one unlucky lookup does not name a connection for
/// its whole life.
/// </summary>
public sealed class DescriptorNames(int pid, TargetTable targets)
{
    private static readonly long RetryTicks = System.Diagnostics.Stopwatch.Frequency;

    private readonly Dictionary<long, Named> _byDescriptor = [];
    private readonly string _fdDirectory = $"/proc/{pid}/fd/";

    public int Resolve(long fd)
    {
        long now = System.Diagnostics.Stopwatch.GetTimestamp();
        if (_byDescriptor.TryGetValue(fd, out var named) && (named.RetryAt == 0 || now < named.RetryAt))
            return named.Target;
        var (name, kind, complete) = Describe(fd);
        return Remember(fd, name, kind, complete, now);
    }

    /// <summary>
    /// Names a descriptor an open just made. Events reach the monitor after the fact, so the
    /// server may have closed it already and reused its number: a file that a sampler read and
    /// closed, its number then taken by an accepted connection, would read as that connection and
    /// lend it the file's bytes. A socket or pipe where a file was opened, or anything but a socket
    /// where a connection was accepted, is that case: the descriptor is named closed, and its next
    /// open names the number afresh.
    /// </summary>
    public int ResolveOpened(long fd, bool socketExpected)
    {
        _byDescriptor.Remove(fd);
        var (name, kind, complete) = Describe(fd);
        bool stale = socketExpected ? kind != TargetKind.Socket : kind is TargetKind.Socket or TargetKind.Pipe;
        if (stale)
            (name, kind, complete) = ($"fd {fd} (closed)", TargetKind.Other, true);
        return Remember(fd, name, kind, complete, System.Diagnostics.Stopwatch.GetTimestamp());
    }

    private int Remember(long fd, string name, TargetKind kind, bool complete, long now)
    {
        int id = targets.Intern(name, kind);
        _byDescriptor[fd] = new Named(id, complete ? 0 : now + RetryTicks);
        return id;
    }

    /// <summary>The descriptor was closed or reused: look it up again next time.</summary>
    public void Forget(long fd) => _byDescriptor.Remove(fd);

    /// <summary>A descriptor's target, and when to look again if its name is a fallback (0: never).</summary>
    private readonly record struct Named(int Target, long RetryAt);

    private (string Name, TargetKind Kind, bool Complete) Describe(long fd)
    {
        string? link;
        try
        {
            link = new FileInfo(_fdDirectory + fd.ToString(CultureInfo.InvariantCulture)).LinkTarget;
        }
        catch (IOException)
        {
            link = null;
        }
        catch (UnauthorizedAccessException)
        {
            link = null;
        }
        if (link is null)
            return ($"fd {fd} (closed)", TargetKind.Other, true);
        if (link.StartsWith("socket:[", StringComparison.Ordinal))
        {
            string? socket = SocketName(link["socket:[".Length..^1]);
            return (socket ?? link, TargetKind.Socket, socket is not null);
        }
        if (link.StartsWith("pipe:[", StringComparison.Ordinal))
            return ("pipe", TargetKind.Pipe, true);
        if (link.StartsWith('/') && !link.StartsWith("/dev/", StringComparison.Ordinal) && !link.StartsWith("/proc/", StringComparison.Ordinal) && !link.StartsWith("/sys/", StringComparison.Ordinal))
            return (link, TargetKind.File, true);
        return (link, TargetKind.Other, true);
    }

    private string? SocketName(string inode)
    {
        foreach (var (table, v6) in (ReadOnlySpan<(string, bool)>)[("tcp", false), ("tcp6", true)])
        {
            foreach (string line in ReadLines($"/proc/{pid}/net/{table}"))
            {
                // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
                var fields = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
                if (fields.Length > 9 && fields[9] == inode)
                    return $"tcp {Endpoint(fields[1], v6)} <- {Endpoint(fields[2], v6)}";
            }
        }
        foreach (string line in ReadLines($"/proc/{pid}/net/unix"))
        {
            // Num RefCount Protocol Flags Type St Inode [Path]
            var fields = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (fields.Length > 6 && fields[6] == inode)
                return fields.Length > 7 ? "unix " + fields[7] : "unix socket";
        }
        return null;
    }

    /// <summary>A /proc table's rows, without its heading line.</summary>
    private static ReadOnlySpan<string> ReadLines(string path)
    {
        try
        {
            var lines = File.ReadAllLines(path);
            return lines.AsSpan(Math.Min(1, lines.Length));
        }
        catch (IOException)
        {
            return [];
        }
    }

    /// <summary>"0100007F:18EB" (address in the kernel's byte order, port in hex) to "127.0.0.1:6379".</summary>
    public static string Endpoint(string hex, bool v6)
    {
        var endpoint = ParseEndpoint(hex);
        var ip = endpoint.Address;
        if (v6 && ip.IsIPv4MappedToIPv6)
            ip = ip.MapToIPv4();
        return v6 && ip.AddressFamily == System.Net.Sockets.AddressFamily.InterNetworkV6 ? $"[{ip}]:{endpoint.Port}" : $"{ip}:{endpoint.Port}";
    }

    /// <summary>A /proc/net/tcp or tcp6 address column as an endpoint.</summary>
    public static IPEndPoint ParseEndpoint(string hex)
    {
        int colon = hex.IndexOf(':');
        int port = int.Parse(hex.AsSpan(colon + 1), NumberStyles.HexNumber, CultureInfo.InvariantCulture);
        var address = hex.AsSpan(0, colon);
        var bytes = new byte[address.Length / 2];
        // Each 32-bit word is printed as a host-order (little-endian) integer.
        for (int word = 0; word < bytes.Length / 4; word++)
        {
            uint value = uint.Parse(address.Slice(word * 8, 8), NumberStyles.HexNumber, CultureInfo.InvariantCulture);
            BitConverter.TryWriteBytes(bytes.AsSpan(word * 4, 4), value);
        }
        return new IPEndPoint(new IPAddress(bytes), port);
    }
}
