using Bunit;
using Diagnostics.Contracts;
using Diagnostics.Studio.Security;
using Diagnostics.Studio.Pages;
using Diagnostics.Studio.Sources;

namespace Diagnostics.Server.Tests.Studio;

/// <summary>The Clients page with fixed data: filtering, sorting, and killing a client only after a confirmation.</summary>
public sealed class ClientsComponentTests
{
    /// <summary>Records what the page asked the server to do; the browser test kills a real connection.</summary>
    private sealed class RecordingControl : IServerControl
    {
        public List<long> Killed { get; } = [];

        public bool KillClient(long id)
        {
            Killed.Add(id);
            return true;
        }
    }

    private static FixedStudioSource Source(IServerControl? control, bool live = true) => new()
    {
        Live = live,
        Control = control,
        ClientList =
        [
            new ClientSnapshot { Id = 3, Address = "127.0.0.1:50001", LocalAddress = "127.0.0.1:6379", Name = "billing", LastCommand = "get", OutputMemoryBytes = 4 << 20, OutputStalledSeconds = 12, LibraryName = "redis-py", LibraryVersion = "5.0" },
            new ClientSnapshot { Id = 5, Address = "127.0.0.1:50002", LocalAddress = "127.0.0.1:6379", Name = "", LastCommand = "set", NetInputBytes = 900 },
            new ClientSnapshot { Id = 9, Address = "10.0.0.8:41000", LocalAddress = "10.0.0.1:6379", Name = "reports", LastCommand = "client|list" },
        ],
    };

    [Fact]
    public void FilterMatchesEveryWordInAnyTextColumn()
    {
        var source = Source(null);
        using var context = StudioRendering.Context(source);
        var page = context.Render<Clients>(source);
        Assert.Equal(["3", "5", "9"], page.RowKeys("table.clients", "data-client-id"));

        page.Find("#client-filter").Input("127.0.0.1");
        Assert.Equal(["3", "5"], page.RowKeys("table.clients", "data-client-id"));
        page.Find("#client-filter").Input("redis-py GET");
        Assert.Equal(["3"], page.RowKeys("table.clients", "data-client-id"));
        page.Find("#client-filter").Input("nothing-like-this");
        Assert.Empty(page.RowKeys("table.clients", "data-client-id"));
        Assert.Contains("0 of 3 connections", page.Find(".toolbar [role=status]").TextContent);
    }

    [Fact]
    public void SortsByOutputBufferBiggestFirst()
    {
        var source = Source(null);
        using var context = StudioRendering.Context(source);
        var page = context.Render<Clients>(source);
        page.FindAll("thead th button").Single(b => b.TextContent.StartsWith("Output buffer")).Click();
        Assert.Equal("3", page.RowKeys("table.clients", "data-client-id")[0]);
        // Marked as stuck because it has taken none of its output for a while, not for its size.
        var stuck = page.Find("tr[data-client-id='3'] td.num.warn");
        Assert.Contains("none taken for", stuck.TextContent);
        Assert.Empty(page.FindAll("tr[data-client-id='5'] td.num.warn"));
    }

    [Fact]
    public void ClientsDisconnectedForALimitAreListedWithWhy()
    {
        var source = new FixedStudioSource
        {
            ClosedClientList =
            [
                new ClosedClient { UnixMs = 1_795_000_000_000, Reason = "output buffer limit", Id = 42, Address = "10.0.0.9:5000", Name = "feed", Class = "pubsub", OutputMemoryBytes = 33 << 20, Limit = "33554432 8388608 60", LastCommand = "subscribe" },
            ],
        };
        using var context = StudioRendering.Context(source);
        var page = context.Render<Clients>(source);
        var row = page.Find("table.closed-clients tbody tr");
        Assert.Contains("output buffer limit", row.TextContent);
        Assert.Contains("feed", row.TextContent);
        Assert.Contains("33 MB", row.TextContent);
        Assert.Contains("33554432 8388608 60", row.TextContent);
    }

    [Fact]
    public void NoDisconnectionsSaysSo()
    {
        var source = Source(null);
        using var context = StudioRendering.Context(source);
        var page = context.Render<Clients>(source);
        Assert.Empty(page.FindAll("table.closed-clients"));
        Assert.Contains("None since start.", page.Markup);
    }

    [Fact]
    public void KillAsksFirstThenClosesTheConnection()
    {
        var control = new RecordingControl();
        var source = Source(control);
        using var context = StudioRendering.Context(source);
        var page = context.Render<Clients>(source);

        page.Find("tr[data-client-id='5'] button.kill").Click();
        Assert.Empty(control.Killed);
        Assert.Contains("Close connection 5?", page.Find("tr[data-client-id='5'] .actions").TextContent);
        page.FindAll("tr[data-client-id='5'] .actions button").Single(b => b.TextContent == "Cancel").Click();
        Assert.Empty(control.Killed);

        page.Find("tr[data-client-id='5'] button.kill").Click();
        page.Find("tr[data-client-id='5'] button.confirm-kill").Click();
        Assert.Equal([5L], control.Killed);
        Assert.Contains("Client 5 (127.0.0.1:50002) was disconnected.", page.Find("p.notice").TextContent);
    }

    [Fact]
    public void APackageCannotKill()
    {
        var source = Source(null, live: false);
        using var context = StudioRendering.Context(source);
        var page = context.Render<Clients>(source);
        Assert.Equal(3, page.RowKeys("table.clients", "data-client-id").Length);
        Assert.Empty(page.FindAll("button.kill"));
    }

    [Fact]
    public void KillNeedsItsPermissionAndTheListItsOwn()
    {
        var control = new RecordingControl();
        var source = Source(control);
        var access = new FixedStudioAccess { Current = new("user 'watcher'", "watcher", StudioPermissions.Watch | StudioPermissions.Clients) };
        using (var context = StudioRendering.Context(source, access))
        {
            var page = context.Render<Clients>(source);
            Assert.Equal(3, page.FindAll("table.clients tbody tr").Count);
            Assert.Empty(page.FindAll("button.kill"));
        }
        // Taken away between the confirmation and the click: the click is refused and nothing is killed.
        access.Current = new("user 'ops'", "ops", StudioPermissions.All);
        using (var context = StudioRendering.Context(source, access))
        {
            var page = context.Render<Clients>(source);
            page.Find("tr[data-client-id='5'] button.kill").Click();
            access.Current = new("user 'ops'", "ops", StudioPermissions.Watch | StudioPermissions.Clients);
            page.Find("button.confirm-kill").Click();
            Assert.Empty(control.Killed);
            Assert.Contains("may not kill clients: that needs +client|kill", page.Find("p.error").TextContent);
        }
        access.Current = new("user 'watcher'", "watcher", StudioPermissions.Watch);
        using (var context = StudioRendering.Context(source, access))
        {
            var page = context.Render<Clients>(source);
            Assert.Empty(page.FindAll("table.clients"));
            Assert.Contains("+client|list", page.Find("p.refused").TextContent);
            Assert.DoesNotContain("billing", page.Markup);
        }
    }
}
