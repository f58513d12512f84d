using System.Diagnostics;
using System.Globalization;
using System.Text;
using Diagnostics.Contracts;
using Diagnostics.Server.Diagnostics.Package;
using Diagnostics.Server.Diagnostics.Views;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Diagnostics.Triggers;

/// <summary>
/// Takes a debug package by itself when trouble starts, as dotnet-monitor's collection rules do:
/// when a doctor finding of the configured severity appears (looked for every
/// <see cref="FindingCheckSeconds"/>), or a metric of the history stays past a threshold for a
/// time (each sample). At most one package per package-trigger-interval, the last
/// package-trigger-keep kept in <see cref="PackageFolder"/>. Runs on a thread of its own, woken by
/// the sampler: a package is most wanted when the thread pool is least available.
/// </summary>
public sealed class PackageTriggers : IDisposable
{
    public const int FindingCheckSeconds = 5;

    private readonly DataServer _server;
    private readonly DebugPackageBuilder _builder;
    private readonly ILogger _log;
    private readonly Thread _thread;
    private readonly AutoResetEvent _sampled = new(false);
    private readonly Lock _stateLock = new();
    private readonly Dictionary<MetricTrigger, long> _aboveSince = [];
    private readonly HashSet<MetricTrigger> _firedEpisodes = [];
    private readonly Dictionary<string, TriggeredPackage> _taken = new(StringComparer.Ordinal);
    private HashSet<string> _activeFindings = new(StringComparer.Ordinal);
    private long _lastFindingCheckMs;
    private long _lastPackageMs;
    private long _takenCount;
    private long _skipped;
    private long _failed;
    private string? _lastSkipped;
    private double _lastCheckMicros;
    private volatile bool _stopping;

    public PackageTriggers(DataServer server, DebugPackageBuilder builder, ILogger log)
    {
        _server = server;
        _builder = builder;
        _log = log;
        Folder = new PackageFolder(() => server.Config.Dir);
        _thread = new Thread(Run) { IsBackground = true, Name = "package triggers" };
        _thread.Start();
        server.Sampler.Sampled += OnSampled;
    }

    public PackageFolder Folder { get; }

    private void OnSampled(long unixMs) => _sampled.Set();

    private void Run()
    {
        Memory.TrackedAllocator.NameCurrentThread("package triggers");
        while (true)
        {
            _sampled.WaitOne();
            if (_stopping)
                return;
            try
            {
                Check(DateTimeOffset.UtcNow.ToUnixTimeMilliseconds());
            }
            catch (Exception e)
            {
                // A trigger must never take the server down; say why it did not work.
                _log.LogWarning("Package trigger check failed: {Error}", e.Message);
            }
        }
    }

    private void Check(long nowMs)
    {
        var config = _server.Config;
        var reason = CheckMetrics(config.PackageTriggerMetrics, nowMs);
        if (config.PackageTriggerSeverity != "off" && nowMs - _lastFindingCheckMs >= FindingCheckSeconds * 1000)
        {
            _lastFindingCheckMs = nowMs;
            reason ??= CheckFindings(config.PackageTriggerSeverity == "warning" ? FindingSeverity.Warning : FindingSeverity.Critical);
        }
        else if (config.PackageTriggerSeverity == "off")
        {
            _activeFindings.Clear();
        }
        if (reason is not null)
            Fire(reason.Value.Reason, reason.Value.Slug, nowMs);
    }

    /// <summary>The first metric rule whose metric has now stayed above its threshold long enough (once per episode).</summary>
    private (string Reason, string Slug)? CheckMetrics(IReadOnlyList<MetricTrigger> rules, long nowMs)
    {
        (string, string)? fired = null;
        foreach (var rule in rules)
        {
            double? value = _server.Sampler.History.Latest(rule.Metric);
            if (value is not { } v || v <= rule.Threshold)
            {
                _aboveSince.Remove(rule);
                _firedEpisodes.Remove(rule);
                continue;
            }
            if (!_aboveSince.TryGetValue(rule, out long since))
                _aboveSince[rule] = since = nowMs;
            if (fired is null && nowMs - since >= rule.Seconds * 1000L && _firedEpisodes.Add(rule))
                fired = ($"{rule.Metric} was above {Figure(rule.Threshold)} for {rule.Seconds} s (now {Figure(v)})", Slug(rule.Metric));
        }
        // Rules removed by CONFIG SET leave no state behind.
        if (_aboveSince.Count > rules.Count)
            foreach (var stale in _aboveSince.Keys.Where(r => !rules.Contains(r)).ToList())
                _aboveSince.Remove(stale);
        return fired;
    }

    /// <summary>Findings at or past <paramref name="least"/> that were not there at the last look.</summary>
    private (string Reason, string Slug)? CheckFindings(FindingSeverity least)
    {
        long started = Stopwatch.GetTimestamp();
        var report = DoctorView.Examine(_server, walkKeyspace: false);
        _lastCheckMicros = Stopwatch.GetElapsedTime(started).TotalMicroseconds;
        var active = new HashSet<string>(StringComparer.Ordinal);
        Finding? first = null;
        foreach (var finding in report.Findings)
        {
            if (finding.Severity < least)
                continue;
            active.Add(finding.Rule);
            if (first is null && !_activeFindings.Contains(finding.Rule))
                first = finding;
        }
        _activeFindings = active;
        return first is null ? null : ($"doctor finding {first.Rule} ({first.Severity.ToString().ToLowerInvariant()}): {first.Title}", Slug(first.Rule));
    }

    private void Fire(string reason, string slug, long nowMs)
    {
        long intervalMs = _server.Config.PackageTriggerIntervalSeconds * 1000L;
        if (_lastPackageMs != 0 && nowMs - _lastPackageMs < intervalMs)
        {
            lock (_stateLock)
            {
                _skipped++;
                _lastSkipped = $"{reason}: within {_server.Config.PackageTriggerIntervalSeconds} s of the last package";
            }
            return;
        }
        _lastPackageMs = nowMs;
        var at = DateTimeOffset.FromUnixTimeMilliseconds(nowMs);
        TriggeredPackage package;
        long started = Stopwatch.GetTimestamp();
        try
        {
            string path = Folder.NewPackagePath(at, slug);
            // Built under a name the folder does not list, then renamed: a half-written package is
            // never listed, served or pruned. This thread has no synchronization context: waiting
            // here is safe, and keeps the build on it rather than on the pool.
            string partial = path + ".partial";
            _builder.BuildAsync(partial, reason, grant: null, CancellationToken.None).GetAwaiter().GetResult();
            double milliseconds = Stopwatch.GetElapsedTime(started).TotalMilliseconds;
            package = new TriggeredPackage(Path.GetFileName(path), nowMs, reason, new FileInfo(partial).Length, milliseconds, SlowestEntry(partial));
            // Known before it is listed: a list made in between shows it with its cost.
            lock (_stateLock)
            {
                _takenCount++;
                _taken[package.Name] = package;
            }
            File.Move(partial, path);
        }
        catch (Exception e)
        {
            lock (_stateLock)
            {
                _failed++;
                _lastSkipped = $"{reason}: the package failed: {e.Message}";
            }
            _log.LogWarning("A trigger fired ({Reason}) but the debug package failed: {Error}", reason, e.Message);
            return;
        }
        Folder.Prune(_server.Config.PackageTriggerKeep);
        // Costs are kept only for packages still in the folder: a server up for months keeps a handful.
        lock (_stateLock)
            foreach (string name in _taken.Keys.ToList())
                if (Folder.Find(name) is null)
                    _taken.Remove(name);
        _log.LogWarning("Took debug package {Name} because {Reason} ({Milliseconds} ms, {Bytes} bytes)",
            package.Name, reason, Math.Round(package.BuildMilliseconds), package.Bytes);
    }

    /// <summary>The entry that took longest to write, as "stacks.txt 412 ms".</summary>
    private static string? SlowestEntry(string path)
        => PackageFolder.ManifestOf(path)?.Entries.MaxBy(e => e.Milliseconds) is { } slowest
            ? $"{slowest.Name} {Figure(Math.Round(slowest.Milliseconds))} ms"
            : null;

    /// <summary>The settings, what was taken and what was skipped, for the API, the studio and the package.</summary>
    public TriggerReport Report()
    {
        var config = _server.Config;
        var packages = new List<TriggeredPackage>();
        foreach (var file in Folder.Files())
        {
            TriggeredPackage? known;
            lock (_stateLock)
                _taken.TryGetValue(file.Name, out known);
            packages.Add(known ?? new TriggeredPackage(file.Name, new DateTimeOffset(file.LastWriteTimeUtc).ToUnixTimeMilliseconds(), PackageFolder.ManifestOf(file.FullName)?.Trigger ?? "", file.Length, 0, null));
        }
        lock (_stateLock)
        {
            return new TriggerReport
            {
                Severity = config.PackageTriggerSeverity,
                MetricRules = config.PackageTriggerMetrics.Select(r => r.ToString()).ToList(),
                IntervalSeconds = config.PackageTriggerIntervalSeconds,
                Keep = config.PackageTriggerKeep,
                Folder = Folder.Path,
                Taken = _takenCount,
                Skipped = _skipped,
                Failed = _failed,
                LastSkipped = _lastSkipped,
                Packages = packages,
            };
        }
    }

    /// <summary>INFO triggers: the settings, the counts, and the last package with its cost.</summary>
    public void WriteInfo(StringBuilder text)
    {
        var config = _server.Config;
        TriggeredPackage? last = null;
        long taken, skipped, failed;
        lock (_stateLock)
        {
            taken = _takenCount;
            skipped = _skipped;
            failed = _failed;
            foreach (var package in _taken.Values)
                if (last is null || package.TakenUnixMs > last.TakenUnixMs)
                    last = package;
        }
        Field(text, "trigger_severity", config.PackageTriggerSeverity);
        Field(text, "trigger_metrics", string.Join(' ', config.PackageTriggerMetrics));
        Field(text, "trigger_interval_sec", config.PackageTriggerIntervalSeconds.ToString(CultureInfo.InvariantCulture));
        Field(text, "trigger_keep", config.PackageTriggerKeep.ToString(CultureInfo.InvariantCulture));
        Field(text, "trigger_packages_taken", taken.ToString(CultureInfo.InvariantCulture));
        Field(text, "trigger_packages_skipped", skipped.ToString(CultureInfo.InvariantCulture));
        Field(text, "trigger_packages_failed", failed.ToString(CultureInfo.InvariantCulture));
        Field(text, "trigger_packages_kept", Folder.Files().Count.ToString(CultureInfo.InvariantCulture));
        Field(text, "trigger_check_usec", Math.Round(_lastCheckMicros).ToString(CultureInfo.InvariantCulture));
        Field(text, "trigger_last_package", last?.Name ?? "");
        Field(text, "trigger_last_time", ((last?.TakenUnixMs ?? 0) / 1000).ToString(CultureInfo.InvariantCulture));
        Field(text, "trigger_last_reason", last?.Reason ?? "");
        Field(text, "trigger_last_build_ms", Math.Round(last?.BuildMilliseconds ?? 0).ToString(CultureInfo.InvariantCulture));
        Field(text, "trigger_last_bytes", (last?.Bytes ?? 0).ToString(CultureInfo.InvariantCulture));
    }

    private static void Field(StringBuilder text, string name, string value)
        // INFO is line-based: a reason never breaks a line.
        => text.Append(name).Append(':').Append(value.Replace('\r', ' ').Replace('\n', ' ')).Append("\r\n");

    private static string Figure(double value) => value.ToString("0.##", CultureInfo.InvariantCulture);

    /// <summary>A file-name-safe slug of a rule or metric name.</summary>
    private static string Slug(string name)
    {
        var slug = new StringBuilder(name.Length);
        foreach (char c in name.ToLowerInvariant())
            slug.Append(c is (>= 'a' and <= 'z') or (>= '0' and <= '9') ? c : '-');
        return slug.Length > 64 ? slug.ToString(0, 64) : slug.ToString();
    }

    public void Dispose()
    {
        _server.Sampler.Sampled -= OnSampled;
        _stopping = true;
        _sampled.Set();
        _thread.Join(TimeSpan.FromSeconds(30));
        _sampled.Dispose();
    }
}
