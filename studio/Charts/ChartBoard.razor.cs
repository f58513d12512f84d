using Diagnostics.Contracts;
using Diagnostics.Studio.Sources;
using Microsoft.AspNetCore.Components;
using Microsoft.JSInterop;

namespace Diagnostics.Studio.Charts;

/// <summary>
/// The charts of one page in one browser tab: it loads the history once per page load, takes the
/// shared 1 Hz feed and sends every chart's new points to the browser in one call a tick, and
/// holds the page's time window and pause switch. Charts find it as a cascading value.
/// </summary>
public sealed partial class ChartBoard
{
    public static readonly int[] Windows = [300, 900, 3600];
    private const string ModulePath = "./_content/Diagnostics.Studio/js/charts.js";

    private readonly List<TimeChart> _charts = [];
    private IJSObjectReference? _module;
    private IHistoryFeed? _feed;
    private MetricHistory? _history;
    private int _historySeconds;

    [Inject] private IJSRuntime JS { get; set; } = default!;

    [CascadingParameter] public StudioContext Context { get; set; } = default!;

    [Parameter] public RenderFragment? ChildContent { get; set; }

    public int WindowSeconds { get; private set; } = 900;
    public bool Paused { get; private set; }

    /// <summary>Raised after the window or pause switch changed, for the controls that show them.</summary>
    public event Action? Changed;

    /// <summary>Raised on the page's dispatcher after each tick's points went to the charts: figures and tables refresh on it.</summary>
    public event Action<MetricHistory>? Ticked;

    protected override void OnInitialized()
    {
        _feed = Context.Source.Feed;
        if (_feed is not null)
            _feed.Appended += OnAppended;
    }

    internal async ValueTask<IJSObjectReference> ModuleAsync() => _module ??= await JS.InvokeAsync<IJSObjectReference>("import", ModulePath);

    /// <summary>The history of the current window, read from the source once and shared by the page's charts.</summary>
    internal MetricHistory History()
    {
        if (_history is null || _historySeconds != WindowSeconds)
        {
            _history = Context.Source.History(WindowSeconds);
            _historySeconds = WindowSeconds;
        }
        return _history;
    }

    internal void Register(TimeChart chart) => _charts.Add(chart);

    internal void Unregister(TimeChart chart) => _charts.Remove(chart);

    public async Task SetWindowAsync(int seconds)
    {
        if (seconds == WindowSeconds)
            return;
        WindowSeconds = seconds;
        var history = History();
        if (_module is not null)
        {
            foreach (var chart in _charts)
            {
                var columns = chart.Columns(history);
                await _module.InvokeVoidAsync("reset", columns.Id, seconds, columns.Times, columns.Columns);
            }
        }
        Changed?.Invoke();
    }

    public async Task SetPausedAsync(bool paused)
    {
        Paused = paused;
        if (_module is not null)
            await _module.InvokeVoidAsync("setPaused", paused);
        Changed?.Invoke();
    }

    // Runs on the sampler's thread: hand the points to this circuit's dispatcher and return.
    private void OnAppended(MetricHistory points) => _ = InvokeAsync(() => PushAsync(points));

    private async Task PushAsync(MetricHistory points)
    {
        // The next page load reads the history afresh; this one only appends.
        _history = null;
        Ticked?.Invoke(points);
        if (_module is null || _charts.Count == 0)
            return;
        var batch = new ChartColumns[_charts.Count];
        for (int i = 0; i < batch.Length; i++)
            batch[i] = _charts[i].Columns(points);
        try
        {
            await _module.InvokeVoidAsync("append", (object)batch);
        }
        catch (JSDisconnectedException)
        {
            // The tab closed between ticks; DisposeAsync follows.
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (_feed is not null)
            _feed.Appended -= OnAppended;
        if (_module is not null)
        {
            try
            {
                await _module.DisposeAsync();
            }
            catch (JSDisconnectedException)
            {
            }
        }
    }
}
