using Diagnostics.Monitor.Aggregation;

namespace Diagnostics.Monitor;

/// <summary>A kernel source: its events land in an <see cref="IoAggregator"/> that the monitor cuts every second.</summary>
public interface IKernelIoSource : IEventSource
{
    IoAggregator Aggregator { get; }
}
