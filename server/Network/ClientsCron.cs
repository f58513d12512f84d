using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Network;

/// <summary>
/// Once a second, as Redis's clientsCron: closes clients idle for longer than the "timeout"
/// setting (0 = never), closes clients over their output buffer limits (a flush stuck on a client
/// that does not read produces nothing more, so only a periodic look sees the soft limit's time run
/// out, or a lowered limit), samples the largest unsent output for INFO, asks connections whose
/// argument arena is larger than they need to shrink it, and sums the clients' memory for
/// maxmemory-clients, evicting the biggest clients when they are over it.
/// </summary>
public sealed class ClientsCron(DataServer server, ILogger<ClientsCron> log) : BackgroundService
{
    protected override async Task ExecuteAsync(CancellationToken stopping)
    {
        using var timer = new PeriodicTimer(TimeSpan.FromSeconds(1));
        try
        {
            while (await timer.WaitForNextTickAsync(stopping).ConfigureAwait(false))
                Run();
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
            // Stopping (also when the host failed to start): not a failure of this service.
        }
    }

    private void Run()
    {
        int timeout = server.Config.Timeout;
        long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        long ticks = Environment.TickCount64;
        long peak = 0;
        var clients = server.Clients.Snapshot();
        foreach (var client in clients)
        {
            // Replicas are never idle-timed out, as in Redis (their master's PINGs are one-way).
            if (timeout > 0 && now - client.LastInteractionMs > timeout * 1000L && client.Feed is null)
            {
                log.LogInformation("Closing idle client id={Id} addr={Address}", client.Id, client.Address);
                client.Kill();
                continue;
            }
            peak = Math.Max(peak, client.TakeOutputPeak());
            client.CheckOutputBuffer(ticks);
            client.TrackOutputProgress(ticks);
            client.ConsiderQueryBufferTrim(now);
        }
        server.Clients.RecentMaxOutputBuffer.Record(peak, ticks / 1000);
        server.ClientEviction.Sum(clients);
    }
}
