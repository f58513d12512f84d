using System.Net;
using Diagnostics.Server.Network;

namespace Diagnostics.Server.Commands;

/// <summary>
/// The rule behind enable-debug-command and enable-protected-configs (Redis's
/// allowProtectedAction): "yes" allows every client, "local" loopback clients only, "no" none.
/// </summary>
public static class ProtectedAction
{
    public static bool Allowed(string setting, Execution.ClientSession client)
    {
        if (setting == "yes")
            return true;
        if (setting != "local")
            return false;
        string address = client.Address;
        int colon = address.LastIndexOf(':');
        string host = (colon > 0 ? address[..colon] : address).Trim('[', ']');
        // An IPv4 client of a dual-stack socket reads as ::ffff:127.0.0.1.
        return IPAddress.TryParse(host, out var ip) && (IPAddress.IsLoopback(ip) || (ip.IsIPv4MappedToIPv6 && IPAddress.IsLoopback(ip.MapToIPv4())));
    }
}
