using System.Net;
using System.Net.Sockets;
using System.Text;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// maxclients over real TCP: a connection past the limit gets Redis's error and is closed, counted
/// in rejected_connections, while the clients already connected carry on; connections arriving at
/// once on several I/O threads never get more places than the limit allows.
/// </summary>
public sealed class SaturationTests
{
    private const string MaxClientsError = "-ERR max number of clients reached\r\n";

    /// <summary>What the server sent unasked within <paramref name="timeoutMs"/>: a refusal, or "" for an admitted client.</summary>
    private static string Unsolicited(Socket socket, int timeoutMs)
    {
        socket.ReceiveTimeout = timeoutMs;
        var buffer = new byte[256];
        try
        {
            int n = socket.Receive(buffer);
            return Encoding.ASCII.GetString(buffer, 0, n);
        }
        catch (SocketException e) when (e.SocketErrorCode == SocketError.TimedOut)
        {
            return "";
        }
    }

    [Fact]
    public void ConnectionOverMaxClientsIsRefusedAndTheOthersCarryOn()
    {
        using var server = ServerProcess.Start();
        using var first = server.Connect();
        RespAssert.Ok(first.Call("CONFIG", "SET", "maxclients", "3"));
        using var second = server.Connect();
        using var third = server.Connect();
        RespAssert.Simple("PONG", third.Call("PING"));

        using var fourth = server.Connect();
        var refusal = fourth.Read();
        RespAssert.Error("ERR max number of clients reached", refusal);
        Assert.True(fourth.IsClosedByServer(), "the refused connection stays open");

        Assert.Equal(1, InfoFields.GetInt64(first, "stats", "rejected_connections"));
        Assert.Equal(3, InfoFields.GetInt64(first, "clients", "connected_clients"));
        RespAssert.Ok(second.Call("SET", "sat:k", "v"));
        RespAssert.Bulk("v", third.Call("GET", "sat:k"));

        // A place given back is a place for the next one.
        second.Dispose();
        Poll.Until(() => InfoFields.GetInt64(first, "clients", "connected_clients") == 2, "the closed client leaves");
        using var fifth = server.Connect();
        RespAssert.Bulk("v", fifth.Call("GET", "sat:k"));
    }

    [Fact]
    public void SimultaneousConnectionsNeverExceedMaxClients()
    {
        using var server = ServerProcess.Start("--io-threads", "2");
        using var admin = server.Connect();
        RespAssert.Ok(admin.Call("CONFIG", "SET", "maxclients", "6"));

        // 40 connections at once, every one kept open until the end, so a place given back cannot
        // be handed out again while the test counts.
        var sockets = new Socket[40];
        using var start = new Barrier(sockets.Length);
        var threads = Enumerable.Range(0, sockets.Length).Select(i => new Thread(() =>
        {
            sockets[i] = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            start.SignalAndWait();
            sockets[i].Connect(IPAddress.Loopback, server.Port);
        })).ToList();
        threads.ForEach(t => t.Start());
        threads.ForEach(t => t.Join());
        try
        {
            Poll.Until(() => InfoFields.GetInt64(admin, "stats", "rejected_connections") + InfoFields.GetInt64(admin, "clients", "connected_clients") == 41,
                "every connection is admitted or refused");
            // Refused connections have their error waiting; admitted ones were sent nothing.
            var answers = sockets.Select(socket => Unsolicited(socket, 200)).ToList();
            Assert.All(answers, a => Assert.True(a is "" or MaxClientsError, $"unexpected greeting {a}"));
            var admitted = sockets.Where((_, i) => answers[i] == "").ToList();
            // The admin connection holds one of the six places; the other five went to five of the 40.
            Assert.Equal(5, admitted.Count);
            Assert.Equal(35, InfoFields.GetInt64(admin, "stats", "rejected_connections"));
            foreach (var socket in admitted)
            {
                socket.Send(RespClient.Encode("PING"));
                var pong = new byte[7];
                socket.ReceiveTimeout = 10_000;
                Assert.Equal(7, socket.Receive(pong));
                Assert.Equal("+PONG\r\n", Encoding.ASCII.GetString(pong));
            }
        }
        finally
        {
            foreach (var socket in sockets)
                socket.Dispose();
        }
        RespAssert.Simple("PONG", admin.Call("PING"));
    }
}
