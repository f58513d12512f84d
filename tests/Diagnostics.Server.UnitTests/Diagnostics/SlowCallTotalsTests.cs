using Diagnostics.Server.Diagnostics.SlowCommands;

namespace Diagnostics.Server.Tests;

/// <summary>
/// Slow calls counted past the slow log's cap: by command, by client, bounded in clients so a
/// storm of one-off clients cannot push out the one that keeps being slow.
/// </summary>
public sealed class SlowCallTotalsTests
{
    [Fact]
    public void CountsEveryCallByCommandAndClient()
    {
        var totals = new SlowCallTotals();
        totals.Add("keys", 20_000, 100, clientId: 7, "127.0.0.1:5000", "reporter");
        totals.Add("keys", 50_000, 101, clientId: 7, "127.0.0.1:5000", "reporter");
        totals.Add("debug", 30_000, 102, clientId: 8, "127.0.0.1:5001", "");
        var summary = totals.Snapshot();
        Assert.Equal(3, summary.Calls);
        Assert.Equal(new SlowCallTotals.CommandTotal("keys", 2, 70_000, 50_000), summary.Commands[0]);
        Assert.Equal(new SlowCallTotals.CommandTotal("debug", 1, 30_000, 30_000), summary.Commands[1]);
        Assert.Equal(new SlowCallTotals.ClientTotal(7, "127.0.0.1:5000", "reporter", 2, 50_000, "keys", 101), summary.Clients[0]);
        Assert.Equal(8, summary.Clients[1].Id);
    }

    [Fact]
    public void ManyOneOffClientsDoNotPushOutTheHeavyOne()
    {
        var totals = new SlowCallTotals();
        for (int i = 0; i < 5; i++)
            totals.Add("keys", 20_000, 100, clientId: 1, "127.0.0.1:1", "heavy");
        for (long id = 2; id < 500; id++)
            totals.Add("get", 11_000, 100, id, $"127.0.0.1:{id}", "");
        var summary = totals.Snapshot();
        Assert.Equal(5 + 498, summary.Calls);
        Assert.Equal(64, summary.Clients.Count);
        Assert.Equal(1, summary.Clients[0].Id);
        Assert.Equal(5, summary.Clients[0].Calls);
    }

    [Fact]
    public void ClearStartsAgain()
    {
        var totals = new SlowCallTotals();
        totals.Add("keys", 20_000, 100, clientId: 1, "127.0.0.1:1", "");
        totals.Clear();
        var summary = totals.Snapshot();
        Assert.Equal(0, summary.Calls);
        Assert.Empty(summary.Commands);
        Assert.Empty(summary.Clients);
    }
}
