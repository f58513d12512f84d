using Diagnostics.Contracts;
using Diagnostics.Studio.Charts;
using Diagnostics.Studio.Security;
using Diagnostics.Studio.Sources;
using Microsoft.AspNetCore.Components;
using Microsoft.AspNetCore.Components.Authorization;

namespace Diagnostics.Studio.Pages;

/// <summary>
/// What every studio page shares: the source from the layout, the route parameter of the offline
/// routes ("package/{PackageId}/..."), a refresh on every tick of the live feed, and what the
/// login may see, read again with every refresh (an ACL change applies to open pages).
/// </summary>
public abstract class StudioPage : ComponentBase, IDisposable
{
    [CascadingParameter] public StudioContext Context { get; set; } = default!;
    [CascadingParameter] public ChartBoard Board { get; set; } = default!;

    /// <summary>Set by the offline routes; the layout has already resolved the package from it.</summary>
    [Parameter] public string? PackageId { get; set; }

    [CascadingParameter] private Task<AuthenticationState>? Authentication { get; set; }

    [Inject] private IStudioAccess Access { get; set; } = default!;

    [Inject] private NavigationManager Navigation { get; set; } = default!;

    protected IStudioSource Source => Context.Source;

    /// <summary>Who is logged in and what they may see and do, as of the last refresh.</summary>
    protected StudioGrant Grant { get; private set; } = StudioGrant.Ended;

    /// <summary>True when the login may (a section renders only then, and its data is not even read otherwise).</summary>
    protected bool May(StudioPermissions needed) => Grant.Has(needed);

    /// <summary>What downloading or opening this server's packages needs (everything a package holds).</summary>
    protected StudioPermissions PackageNeeds => Access.PackageNeeds;

    /// <summary>Reads the grant again before an action: a click acts on the rules as they are now, not at the last tick.</summary>
    protected bool MayNow(StudioPermissions needed)
    {
        Grant = Access.Grant(StudioLogin.UserOf(Authentication));
        return Grant.Has(needed);
    }

    protected override void OnInitialized()
    {
        Board.Ticked += OnTicked;
        Grant = Access.Grant(StudioLogin.UserOf(Authentication));
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
        Grant = Access.Grant(StudioLogin.UserOf(Authentication));
        if (!Grant.Has(StudioPermissions.Watch))
        {
            // Watch taken away, or the session ended, while the page was open: loading it again
            // lets the gate and the layout say so (or send the browser to the login page).
            Navigation.Refresh(forceReload: true);
            return;
        }
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
