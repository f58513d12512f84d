using System.Diagnostics;
using System.Net.NetworkInformation;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// A private network namespace joined to this one by a veth pair, so a test can connect to the
/// server from a non-loopback address without touching any real interface: the host end gets
/// 10.200.N.1/30, the namespace end 10.200.N.2/30. Needs root and iproute2; removed on dispose.
/// </summary>
public sealed class NetworkNamespace : IDisposable
{
    private static int s_counter;

    private NetworkNamespace(string name, string hostLink, string hostAddress, string peerAddress)
    {
        Name = name;
        HostLink = hostLink;
        HostAddress = hostAddress;
        PeerAddress = peerAddress;
    }

    public string Name { get; }
    public string HostLink { get; }
    /// <summary>The address on this side, which the server binds.</summary>
    public string HostAddress { get; }
    /// <summary>The address the namespace's clients connect from.</summary>
    public string PeerAddress { get; }

    public static NetworkNamespace Create()
    {
        ExternalTool.Require("ip", "iproute2");
        Assert.True(Environment.IsPrivilegedProcess, "network namespace tests must run as root (they create a namespace and a veth pair)");

        int subnet = FreeSubnet();
        string suffix = $"{Environment.ProcessId % 10000}x{subnet}";
        var ns = new NetworkNamespace($"dsrv{suffix}", $"dsh{suffix}", $"10.200.{subnet}.1", $"10.200.{subnet}.2");
        string peerLink = $"dsp{suffix}";
        try
        {
            Ip("netns", "add", ns.Name);
            Ip("link", "add", ns.HostLink, "type", "veth", "peer", "name", peerLink);
            Ip("link", "set", peerLink, "netns", ns.Name);
            Ip("addr", "add", $"{ns.HostAddress}/30", "dev", ns.HostLink);
            Ip("link", "set", ns.HostLink, "up");
            Ip("netns", "exec", ns.Name, "ip", "addr", "add", $"{ns.PeerAddress}/30", "dev", peerLink);
            Ip("netns", "exec", ns.Name, "ip", "link", "set", peerLink, "up");
            Ip("netns", "exec", ns.Name, "ip", "link", "set", "lo", "up");
        }
        catch
        {
            ns.Dispose();
            throw;
        }
        return ns;
    }

    /// <summary>Runs a program inside the namespace.</summary>
    public ExternalTool.Result Run(string tool, string debianPackage, params string[] arguments)
    {
        string path = ExternalTool.Require(tool, debianPackage);
        return ExternalTool.Run("ip", "iproute2", ["netns", "exec", Name, path, .. arguments], timeoutMs: 30_000);
    }

    /// <summary>A 10.200.N.0/30 subnet no interface of this machine uses yet.</summary>
    private static int FreeSubnet()
    {
        var used = new HashSet<string>();
        foreach (var nic in NetworkInterface.GetAllNetworkInterfaces())
            foreach (var address in nic.GetIPProperties().UnicastAddresses)
                used.Add(address.Address.ToString());
        int start = Environment.ProcessId % 200;
        for (int i = 0; i < 250; i++)
        {
            int subnet = (start + Interlocked.Increment(ref s_counter)) % 250 + 1;
            if (!used.Contains($"10.200.{subnet}.1"))
                return subnet;
        }
        throw new InvalidOperationException("no free 10.200.N.0/30 subnet");
    }

    private static void Ip(params string[] arguments)
    {
        var result = ExternalTool.Run("ip", "iproute2", arguments, timeoutMs: 30_000);
        if (result.ExitCode != 0)
            throw new InvalidOperationException($"ip {string.Join(' ', arguments)} failed ({result.ExitCode}): {result.StandardError}");
    }

    public void Dispose()
    {
        // Deleting the namespace destroys the peer end, and with it the host end of the pair.
        RunQuietly("netns", "del", Name);
        RunQuietly("link", "del", HostLink);
    }

    private static void RunQuietly(params string[] arguments)
    {
        var info = new ProcessStartInfo("ip") { RedirectStandardError = true, RedirectStandardOutput = true, UseShellExecute = false };
        foreach (var a in arguments)
            info.ArgumentList.Add(a);
        using var process = Process.Start(info)!;
        process.StandardOutput.ReadToEnd();
        process.StandardError.ReadToEnd();
        process.WaitForExit(30_000);
    }
}
