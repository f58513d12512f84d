using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Network;

/// <summary>Closes clients idle for longer than the "timeout" setting (0 = never), once a second, as Redis's clientsCron does.</summary>
public sealed class IdleClientReaper(DataServer server, ILogger<IdleClientReaper> log) : BackgroundService
{
    protected override async Task ExecuteAsync(CancellationToken stopping)
    {
        using var timer = new PeriodicTimer(TimeSpan.FromSeconds(1));
        while (await timer.WaitForNextTickAsync(stopping).ConfigureAwait(false))
        {
            int timeout = server.Config.Timeout;
            if (timeout <= 0)
                continue;
            long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
            foreach (var client in server.Clients.Snapshot())
            {
                if (now - client.LastInteractionMs > timeout * 1000L)
                {
                    log.LogInformation("Closing idle client id={Id} addr={Address}", client.Id, client.Address);
                    client.Kill();
                }
            }
        }
    }
}
