using Diagnostics.Contracts;

namespace Diagnostics.Studio.Sources;

/// <summary>
/// The one 1 Hz stream every open studio page shares: after each sample the server raises
/// <see cref="Appended"/> once with only the new points, and every circuit forwards them to its
/// charts. Handlers run on the sampler's thread: they must hand off, never block.
/// </summary>
public interface IHistoryFeed
{
    event Action<MetricHistory>? Appended;
}
