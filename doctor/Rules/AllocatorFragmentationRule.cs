using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// The C allocator under the tracked allocator holds much more than it has handed out, as Redis's
/// MEMORY DOCTOR reports it (its thresholds: a ratio above 1.1 and more than 10 MB, on an
/// instance using at least 5 MB): fragmentation inside the allocator's pages
/// (allocator_frag_*), or pages it keeps resident but no longer uses (allocator_rss_*). RSS
/// outside the allocator (rss_overhead_*) is not reported: here it is mostly the .NET runtime
/// and its managed heap, which the runtime rules look at.
/// </summary>
public sealed class AllocatorFragmentationRule : IDoctorRule
{
    private const double RatioThreshold = 1.1;
    private const long BytesThreshold = 10L << 20;
    private const long EmptyBelow = 5L << 20;

    public string Id => "allocator-fragmentation";
    public string Area => "memory";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        long used = input.InfoInt64("memory", "used_memory");
        string allocator = input.InfoField("memory", "mem_allocator") ?? "the allocator";
        if (used < EmptyBelow)
            yield break;
        if (High(input, "allocator_frag", out double fragRatio, out long fragBytes))
        {
            yield return new Finding
            {
                Rule = Id,
                Area = Area,
                Severity = FindingSeverity.Warning,
                Title = "High allocator fragmentation",
                Seen = $"{allocator} has {Human.Bytes(input.InfoInt64("memory", "allocator_active"))} in active pages for {Human.Bytes(input.InfoInt64("memory", "allocator_allocated"))} handed out: a fragmentation ratio of {fragRatio.ToString("0.00", CultureInfo.InvariantCulture)}, {Human.Bytes(fragBytes)} unused between blocks.",
                Advice = "Many values of mixed sizes were deleted or changed in place: MEMORY PURGE gives free pages back; a restart from a snapshot packs the data again. Another allocator (the allocator setting) may fragment less for this workload.",
                Evidence = Evidence(input, "allocator_frag_ratio", "allocator_frag_bytes", allocator),
            };
        }
        if (High(input, "allocator_rss", out double rssRatio, out long rssBytes))
        {
            yield return new Finding
            {
                Rule = Id + "-rss",
                Area = Area,
                Severity = FindingSeverity.Info,
                Title = "Allocator keeps freed pages resident",
                Seen = $"{allocator} keeps {Human.Bytes(rssBytes)} resident beyond its active pages (ratio {rssRatio.ToString("0.00", CultureInfo.InvariantCulture)}).",
                Advice = "The allocator returns such pages lazily; MEMORY PURGE releases them now. Usually after a large delete: nothing to worry about unless it persists.",
                Evidence = Evidence(input, "allocator_rss_ratio", "allocator_rss_bytes", allocator),
            };
        }
    }

    private static bool High(DoctorInput input, string prefix, out double ratio, out long bytes)
    {
        ratio = double.TryParse(input.InfoField("memory", prefix + "_ratio"), NumberStyles.Float, CultureInfo.InvariantCulture, out double r) ? r : 0;
        bytes = input.InfoInt64("memory", prefix + "_bytes");
        return ratio > RatioThreshold && bytes > BytesThreshold;
    }

    private static Dictionary<string, string> Evidence(DoctorInput input, string ratio, string bytes, string allocator) => new()
    {
        [ratio] = input.InfoField("memory", ratio) ?? "",
        [bytes] = input.InfoField("memory", bytes) ?? "",
        ["used_memory"] = input.InfoInt64("memory", "used_memory").ToString(CultureInfo.InvariantCulture),
        ["mem_allocator"] = allocator,
    };
}
