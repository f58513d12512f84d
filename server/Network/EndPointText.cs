using System.Net;

namespace Diagnostics.Server.Network;

/// <summary>An address as CLIENT LIST writes it: "10.0.0.5:41000", "[::1]:6379", an IPv4-mapped IPv6 address as the IPv4 one.</summary>
public static class EndPointText
{
    public static string Format(EndPoint? endPoint) => endPoint switch
    {
        IPEndPoint { Address.IsIPv4MappedToIPv6: true } ip => $"{ip.Address.MapToIPv4()}:{ip.Port}",
        IPEndPoint { AddressFamily: System.Net.Sockets.AddressFamily.InterNetworkV6 } ip => $"[{ip.Address}]:{ip.Port}",
        IPEndPoint ip => $"{ip.Address}:{ip.Port}",
        null => "",
        _ => endPoint.ToString() ?? "",
    };
}
