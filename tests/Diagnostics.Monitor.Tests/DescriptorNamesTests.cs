using System.Net;
using System.Net.Sockets;
using Diagnostics.Monitor.Aggregation;
using Diagnostics.Monitor.Linux;

namespace Diagnostics.Server.Tests.Monitor;

/// <summary>
/// How the monitor names a descriptor an open made, on this test process's own descriptors read
/// from the real /proc. Events arrive after the fact: by then the number may belong to something
/// else, and an open whose number now holds the wrong kind of object must not lend its bytes to
/// that object (a sampler's /proc file read as the accepted connection that took its number was
/// a real failure of MonitorKernelTests).
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class DescriptorNamesTests
{
    [Fact]
    public void AnAcceptNamesTheConnectionAndAFileOpenNamesTheFile()
    {
        using var pair = ConnectedPair.Open();
        using var file = File.OpenRead("/proc/self/status");
        var targets = new TargetTable();
        var names = new DescriptorNames(Environment.ProcessId, targets);

        var connection = targets[names.ResolveOpened(pair.AcceptedFd, socketExpected: true)];
        Assert.Equal(TargetKind.Socket, connection.Kind);
        Assert.Equal($"tcp 127.0.0.1:{pair.Port} <- {pair.Client.LocalEndPoint}", connection.Name);

        var opened = targets[names.ResolveOpened(file.SafeFileHandle.DangerousGetHandle(), socketExpected: false)];
        Assert.Equal($"/proc/{Environment.ProcessId}/status", opened.Name);
    }

    [Fact]
    public void AFileOpenWhoseNumberNowHoldsASocketIsNamedClosedNotAfterTheSocket()
    {
        using var pair = ConnectedPair.Open();
        var targets = new TargetTable();
        var names = new DescriptorNames(Environment.ProcessId, targets);
        long fd = pair.AcceptedFd;

        var stale = targets[names.ResolveOpened(fd, socketExpected: false)];
        Assert.Equal($"fd {fd} (closed)", stale.Name);
        Assert.Equal(TargetKind.Other, stale.Kind);
        // Reads until the file's close go to the closed name; the accept that took the number names it afresh.
        Assert.Equal(stale.Name, targets[names.Resolve(fd)].Name);
        names.Forget(fd);
        Assert.Equal(TargetKind.Socket, targets[names.ResolveOpened(fd, socketExpected: true)].Kind);
    }

    [Fact]
    public void AnAcceptWhoseNumberNowHoldsAFileIsNamedClosed()
    {
        using var file = File.OpenRead("/proc/self/status");
        var targets = new TargetTable();
        var names = new DescriptorNames(Environment.ProcessId, targets);
        long fd = file.SafeFileHandle.DangerousGetHandle();

        Assert.Equal($"fd {fd} (closed)", targets[names.ResolveOpened(fd, socketExpected: true)].Name);
    }

    /// <summary>A loopback connection and its accepted end, whose descriptor number the tests name.</summary>
    private sealed class ConnectedPair : IDisposable
    {
        private readonly TcpListener _listener;
        private readonly Socket _accepted;

        private ConnectedPair(TcpListener listener, Socket client, Socket accepted)
        {
            _listener = listener;
            Client = client;
            _accepted = accepted;
        }

        public Socket Client { get; }
        public int Port => ((IPEndPoint)_listener.LocalEndpoint).Port;
        public long AcceptedFd => _accepted.SafeHandle.DangerousGetHandle();

        public static ConnectedPair Open()
        {
            var listener = new TcpListener(IPAddress.Loopback, 0);
            listener.Start();
            var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            client.Connect(listener.LocalEndpoint);
            return new ConnectedPair(listener, client, listener.AcceptSocket());
        }

        public void Dispose()
        {
            _accepted.Dispose();
            Client.Dispose();
            _listener.Stop();
        }
    }
}
