using System.Net;
using System.Net.Sockets;

namespace Diagnostics.Server.Network;

/// <summary>
/// Turns redis.conf "bind" addresses into endpoints. As in Redis 7, an address prefixed with "-"
/// is optional: it is skipped when the machine cannot bind it (no IPv6, say), instead of failing.
/// </summary>
public static class ListenAddresses
{
    public static List<IPEndPoint> Resolve(IEnumerable<string> bind, int port)
    {
        var endPoints = new List<IPEndPoint>();
        foreach (string entry in bind)
        {
            bool optional = entry.StartsWith('-');
            string text = optional ? entry[1..] : entry;
            IPAddress address = text switch
            {
                "*" => IPAddress.Any,
                "::*" => IPAddress.IPv6Any,
                "localhost" => IPAddress.Loopback,
                _ => IPAddress.Parse(text),
            };
            if (optional && !CanBind(address))
                continue;
            endPoints.Add(new IPEndPoint(address, port));
        }
        return endPoints;
    }

    private static bool CanBind(IPAddress address)
    {
        try
        {
            using var probe = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
            probe.Bind(new IPEndPoint(address, 0));
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
