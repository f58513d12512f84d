using Microsoft.Extensions.Hosting;

namespace Diagnostics.Server.Tls;

/// <summary>
/// Hot reload: once a second, looks at the certificate, key and CA files' sizes and times, and
/// rebuilds the TLS context when they changed (Redis needs a CONFIG SET for that; renewal tools
/// such as certbot or cert-manager just replace the files). A change is acted on once the files
/// have stood still for a second, so a certificate and key replaced one after the other are read
/// as a pair; a state that was refused is not retried (nor logged again) until the files change.
/// </summary>
public sealed class TlsCertificateWatcher(DataServer server) : BackgroundService
{
    private readonly FileWatch[] _watches = [new(server.Tls), new(server.HttpTls)];

    protected override async Task ExecuteAsync(CancellationToken stopping)
    {
        using var timer = new PeriodicTimer(TimeSpan.FromSeconds(1));
        try
        {
            while (await timer.WaitForNextTickAsync(stopping).ConfigureAwait(false))
                foreach (var watch in _watches)
                    watch.Look();
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
            // Stopping: not a failure of this service.
        }
    }

    /// <summary>One context's files: the state seen last and the state last refused.</summary>
    private sealed class FileWatch(TlsContext tls)
    {
        private string? _settling;
        private string? _refused;

        public void Look()
        {
            if (tls.Current is not { } current || !tls.InUse)
                return;
            string now = tls.FileSignatureNow();
            if (now == current.FileSignature)
            {
                _settling = null;
                return;
            }
            if (now != _settling)
            {
                _settling = now;
                return;
            }
            if (now == _refused)
                return;
            if (tls.Configure("certificate files changed") is not null)
                _refused = now;
        }
    }
}
