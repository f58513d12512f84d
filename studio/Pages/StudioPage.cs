using Diagnostics.Contracts;
using Diagnostics.Studio.Charts;
using Diagnostics.Studio.Sources;
using Microsoft.AspNetCore.Components;

namespace Diagnostics.Studio.Pages;

/// <summary>
/// What every studio page shares: the source from the layout, the route parameter of the offline
/// routes ("package/{PackageId}/..."), and a refresh on every tick of the live feed.
/// </summary>
public abstract class StudioPage : ComponentBase, IDisposable
{
    [CascadingParameter] public StudioContext Context { get; set; } = default!;
    [CascadingParameter] public ChartBoard Board { get; set; } = default!;

    /// <summary>Set by the offline routes; the layout has already resolved the package from it.</summary>
    [Parameter] public string? PackageId { get; set; }

    protected IStudioSource Source => Context.Source;

    protected override void OnInitialized()
    {
        Board.Ticked += OnTicked;
        Refresh(Board.History());
    }

    /// <summary>
    /// Reads what the page shows from the source: at load with the window's history, and after
    /// every tick of a live source with that tick's new points.
    /// </summary>
    protected abstract void Refresh(MetricHistory recent);

    // Paused, the page keeps reading (so nothing is missing on resume) but holds still on screen.
    private void OnTicked(MetricHistory points)
    {
        Refresh(points);
        if (!Board.Paused)
            StateHasChanged();
    }

    public virtual void Dispose()
    {
        Board.Ticked -= OnTicked;
        GC.SuppressFinalize(this);
    }
}
