using Bunit;
using Diagnostics.Contracts;
using Diagnostics.Studio.Pages;
using Diagnostics.Studio.Security;

namespace Diagnostics.Server.Tests.Studio;

/// <summary>The Debug package page with fixed data: the download, the packages the server took by itself, and a package opened.</summary>
public sealed class PackageComponentTests
{
    private static readonly TriggerReport Triggers = new()
    {
        Severity = "critical",
        MetricRules = ["cpu_process_percent 90 30"],
        IntervalSeconds = 300,
        Keep = 5,
        Folder = "/var/lib/diagnostics/debug-packages",
        Taken = 2,
        Skipped = 1,
        LastSkipped = "doctor finding gc-pauses (critical): GC pauses: within 300 s of the last package",
        Packages =
        [
            new TriggeredPackage("package-20261126-101500-memory-near-maxmemory.zip", 1795688100000, "doctor finding memory-near-maxmemory (critical): Writes refused", 412_000, 612.4, "stacks.txt 410 ms"),
            new TriggeredPackage("package-20261120-090000-cpu-process-percent.zip", 1795165200000, "cpu_process_percent was above 90 for 30 s (now 97)", 380_000, 0, null),
        ],
    };

    [Fact]
    public void TriggeredPackagesAreListedWithWhyAndCost()
    {
        var source = new FixedStudioSource { TriggersReport = Triggers };
        using var context = StudioRendering.Context(source);
        var page = context.Render<Package>(source);
        var section = page.Find("section[aria-labelledby=triggered-title]");
        Assert.Contains("A new critical finding takes a package; so does a metric past its threshold: cpu_process_percent above 90 for 30 s.", section.TextContent);
        Assert.Contains("At most one every 5m 0s; the last 5 are kept in /var/lib/diagnostics/debug-packages", section.TextContent);
        Assert.Contains("Taken since start: 2, skipped within the interval: 1.", section.TextContent);
        Assert.Contains("Last trigger without a package: doctor finding gc-pauses", section.TextContent);
        var rows = section.QuerySelectorAll("tbody tr");
        Assert.Equal(2, rows.Length);
        Assert.Contains("2026-11-26 10:15:00 UTC", rows[0].TextContent);
        Assert.Contains("doctor finding memory-near-maxmemory (critical): Writes refused", rows[0].TextContent);
        Assert.Contains("(slowest: stacks.txt 410 ms)", rows[0].TextContent);
        Assert.Equal("api/debug/packages/package-20261126-101500-memory-near-maxmemory.zip", rows[0].QuerySelector("a")!.GetAttribute("href"));
        // An older run's package: its cost is not known, and nothing is made up.
        Assert.Equal("", rows[1].QuerySelectorAll("td")[3].TextContent.Trim());
    }

    [Fact]
    public void OpeningAPackageNoLongerKeptSaysSo()
    {
        var source = new FixedStudioSource { TriggersReport = Triggers };
        using var context = StudioRendering.Context(source);
        var page = context.Render<Package>(source);
        page.FindAll("section[aria-labelledby=triggered-title] button")[0].Click();
        Assert.Contains("package-20261126-101500-memory-near-maxmemory.zip is no longer kept", page.Find("[role=alert]").TextContent);
    }

    [Fact]
    public void ALoginThatMayNotSeeEverythingIsToldWhatItsPackageLeavesOut()
    {
        var source = new FixedStudioSource { TriggersReport = Triggers };
        var access = new FixedStudioAccess { Current = new("user 'watcher'", "watcher", StudioPermissions.Watch | StudioPermissions.Clients) };
        using var context = StudioRendering.Context(source, access);
        var page = context.Render<Package>(source);
        var download = page.Find("section[aria-labelledby=download-title]");
        Assert.Equal("api/debug/package", download.QuerySelector("a.button")!.GetAttribute("href"));
        var note = download.QuerySelector("p.refused")!;
        Assert.Equal("slowlog keys config acl-log", note.GetAttribute("data-needs"));
        Assert.Contains("ACL SETUSER watcher +slowlog|get +scan +config|get +acl|log", note.TextContent);
        Assert.Contains("leaves out the parts it may not see", note.TextContent);
        // The server's own packages hold everything: no link to them for this login.
        Assert.Empty(page.FindAll("section[aria-labelledby=triggered-title] a"));

        // A login that may see everything downloads the whole package, and is told nothing.
        access.Current = new("user 'tester'", "tester", StudioPermissions.All);
        var whole = context.Render<Package>(source);
        Assert.Empty(whole.FindAll("section[aria-labelledby=download-title] p.refused"));
        Assert.Equal(2, whole.FindAll("section[aria-labelledby=triggered-title] a").Count);
    }

    [Fact]
    public void APartialPackagesBannerNamesWhoTookItAndWhatItLeavesOut()
    {
        var description = new global::Diagnostics.Studio.Sources.SourceDescription(global::Diagnostics.Studio.Sources.SourceKind.Package, "fixture-host", 4242, "1.2.3",
            DateTimeOffset.UnixEpoch, "0123456789abcdef01234567", "partial.zip", "user 'watcher'",
            [new PackageOmission("slowlog.json", "slowlog", "+slowlog|get"), new PackageOmission("config.json", "config", "+config|get")]);
        using var context = StudioRendering.Context(new FixedStudioSource { Live = false, Description = description });
        var banner = context.Render<global::Diagnostics.Studio.Layout.SourceBanner>(p => p.Add(b => b.Description, description));
        var partial = banner.Find("p.source.partial");
        // As a browser shows it: the markup's line breaks are spaces.
        Assert.Contains("Taken by user 'watcher' that may not see everything: it leaves out slowlog.json, config.json, so what those show is empty here",
            System.Text.RegularExpressions.Regex.Replace(partial.TextContent, @"\s+", " "));
        Assert.Equal("package/0123456789abcdef01234567/package", partial.QuerySelector("a")!.GetAttribute("href"));

        // A whole package has no such line.
        var whole = context.Render<global::Diagnostics.Studio.Layout.SourceBanner>(p => p.Add(b => b.Description, description with { TakenBy = null, Omitted = [] }));
        Assert.Empty(whole.FindAll("p.source.partial"));
    }

    [Fact]
    public void InAnOpenedPackageTheListHasNoLinksOrButtons()
    {
        var source = new FixedStudioSource { Live = false, TriggersReport = Triggers, Description = new(global::Diagnostics.Studio.Sources.SourceKind.Package, "fixture-host", 4242, "1.2.3") };
        using var context = StudioRendering.Context(source);
        var page = context.Render<Package>(source);
        var section = page.Find("section[aria-labelledby=triggered-title]");
        Assert.Empty(section.QuerySelectorAll("a"));
        Assert.Empty(section.QuerySelectorAll("button"));
    }
}
