using System.Runtime.InteropServices;
using Microsoft.Extensions.Hosting;

namespace Diagnostics.Server.Lifetime;

/// <summary>
/// SIGTERM, SIGINT and SIGQUIT as a request for an orderly stop, whenever they come, as Redis
/// takes SIGTERM and SIGINT. Created first thing in Main: a signal while the AOF loads or the
/// listeners open is then a stop request like any other, not the runtime's default (killed,
/// exit 143). Also the host's <see cref="IHostLifetime"/> in place of ConsoleLifetime, whose own
/// handler stopped the host while its start was under way: Kestrel's bind was cancelled mid-way
/// and the exception escaped Main (exit 134). Program acts on <see cref="Requested"/> once the
/// host has started.
/// </summary>
public sealed class StopSignals : IHostLifetime, IDisposable
{
    private readonly CancellationTokenSource _requested = new();
    private readonly PosixSignalRegistration[] _registrations;
    private int _received;

    public StopSignals()
    {
        _registrations =
        [
            PosixSignalRegistration.Create(PosixSignal.SIGTERM, OnSignal),
            PosixSignalRegistration.Create(PosixSignal.SIGINT, OnSignal),
            PosixSignalRegistration.Create(PosixSignal.SIGQUIT, OnSignal),
        ];
    }

    /// <summary>Cancelled when the first stop signal arrives.</summary>
    public CancellationToken Requested => _requested.Token;

    /// <summary>The first stop signal received (for the log line), or 0.</summary>
    public PosixSignal Received => (PosixSignal)Volatile.Read(ref _received);

    private void OnSignal(PosixSignalContext context)
    {
        // The runtime's default action would end the process at once: the server stops itself.
        context.Cancel = true;
        Interlocked.CompareExchange(ref _received, (int)context.Signal, 0);
        _requested.Cancel();
    }

    /// <summary>Other hosts' lifetimes wait here for a console or a service manager; nothing to wait for.</summary>
    Task IHostLifetime.WaitForStartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    Task IHostLifetime.StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public void Dispose()
    {
        // The token source stays undisposed: a signal handler may still be running.
        foreach (var registration in _registrations)
            registration.Dispose();
    }
}
