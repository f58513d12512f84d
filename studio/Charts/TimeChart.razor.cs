using Diagnostics.Contracts;
using Microsoft.AspNetCore.Components;
using Microsoft.JSInterop;

namespace Diagnostics.Studio.Charts;

/// <summary>
/// A time-series chart of history series. Its markup renders once: after that charts.js owns the
/// drawing, and the page's <see cref="ChartBoard"/> sends it new points each second.
/// </summary>
public sealed partial class TimeChart
{
    private static long _nextId;
    private readonly string _id = $"chart-{Interlocked.Increment(ref _nextId)}";
    private ElementReference _host;
    private bool _created;

    [CascadingParameter] public ChartBoard Board { get; set; } = default!;

    [Parameter, EditorRequired] public string Title { get; set; } = "";
    [Parameter, EditorRequired] public IReadOnlyList<ChartSeries> Series { get; set; } = [];
    [Parameter] public ChartUnit Unit { get; set; } = ChartUnit.Count;
    [Parameter] public int Height { get; set; } = 180;

    /// <summary>The element id, which the doctor's links point at.</summary>
    public string Id => _id;

    internal ChartColumns Columns(MetricHistory history) => ChartColumns.From(_id, history, Series);

    protected override bool ShouldRender() => !_created;

    protected override async Task OnAfterRenderAsync(bool firstRender)
    {
        if (!firstRender)
            return;
        _created = true;
        var module = await Board.ModuleAsync();
        var columns = Columns(Board.History());
        var spec = new { unit = char.ToLowerInvariant(Unit.ToString()[0]) + Unit.ToString()[1..], windowSeconds = Board.WindowSeconds, series = Series.Select(s => s.Label).ToArray() };
        await module.InvokeVoidAsync("create", _id, _host, spec, columns.Times, columns.Columns);
        Board.Register(this);
    }

    public async ValueTask DisposeAsync()
    {
        Board.Unregister(this);
        if (!_created)
            return;
        try
        {
            await (await Board.ModuleAsync()).InvokeVoidAsync("dispose", _id);
        }
        catch (JSDisconnectedException)
        {
        }
    }
}
