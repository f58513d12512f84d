using Diagnostics.Contracts;

namespace Diagnostics.Monitor;

/// <summary>
/// One stream of events about the server process: the kernel's I/O (tracefs, ETW) or the
/// runtime's events (EventPipe). Started once per attachment, reported on every second,
/// disposed when the server goes or the monitor stops (leaving nothing behind in the kernel).
/// </summary>
public interface IEventSource : IDisposable
{
    string Name { get; }

    /// <summary>
    /// Begins collecting. A refusal shows as a "failed: why" state in <see cref="Report"/> (a source
    /// that opens its session on a thread of its own fails there), or as an exception from here.
    /// </summary>
    void Start();

    /// <summary>State, rate over the last <paramref name="interval"/>, totals and drops.</summary>
    MonitorSourceStatus Report(TimeSpan interval);
}
