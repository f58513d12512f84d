using Diagnostics.Contracts;
using Diagnostics.Server.Diagnostics.History;
using Diagnostics.Studio.Sources;

namespace Diagnostics.Server.Studio;

/// <summary>
/// The studio's one 1 Hz feed: after each sample it cuts the new points out of the history once
/// and hands the same object to every open page, so ten tabs cost one history read a second, not
/// ten. No subscribers, no work.
/// </summary>
public sealed class LiveHistoryFeed : IHistoryFeed, IDisposable
{
    private readonly Sampler _sampler;
    private long _lastSentMs;

    public LiveHistoryFeed(Sampler sampler)
    {
        _sampler = sampler;
        _lastSentMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        sampler.Sampled += OnSampled;
    }

    public event Action<MetricHistory>? Appended;

    private void OnSampled(long unixMs)
    {
        var handlers = Appended;
        long from = _lastSentMs + 1;
        _lastSentMs = unixMs;
        if (handlers is null)
            return;
        var points = _sampler.History.Window(from, unixMs);
        if (points.Times.Length > 0)
            handlers(points);
    }

    public void Dispose() => _sampler.Sampled -= OnSampled;
}
