using Bunit;
using Diagnostics.Studio.Charts;
using Diagnostics.Studio.Security;
using Diagnostics.Studio.Sources;
using Microsoft.AspNetCore.Components;
using Microsoft.Extensions.DependencyInjection;

namespace Diagnostics.Server.Tests.Studio;

/// <summary>
/// Renders a studio page in bUnit the way the layout does: under the source's context and a
/// chart board, with the charts' JavaScript module answered by bUnit's loose JS interop.
/// </summary>
public static class StudioRendering
{
    public static BunitContext Context(IStudioSource source, FixedStudioAccess? access = null)
    {
        var context = new BunitContext();
        context.JSInterop.Mode = JSRuntimeMode.Loose;
        context.Services.AddSingleton(source);
        context.Services.AddSingleton<IStudioAccess>(access ?? new FixedStudioAccess());
        context.Services.AddSingleton<PackageLibrary>();
        return context;
    }

    public static IRenderedComponent<ChartBoard> Render<TPage>(this BunitContext context, IStudioSource source, string linkPrefix = "") where TPage : IComponent
    {
        var studio = new StudioContext(source, linkPrefix);
        var host = context.Render<CascadingValue<StudioContext>>(parameters => parameters
            .Add(p => p.Value, studio)
            .AddChildContent<ChartBoard>(board => board.AddChildContent<TPage>()));
        return host.FindComponent<ChartBoard>();
    }

    /// <summary>The rows of a table in display order, each named by one of its attributes (data-tid, data-client-id...).</summary>
    public static string[] RowKeys(this IRenderedComponent<IComponent> page, string table, string attribute) =>
        [.. page.FindAll($"{table} tbody tr").Select(r => r.GetAttribute(attribute)!)];
}
