using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>The process is close to a limit the host sets: the container's memory, or open files.</summary>
public sealed class ResourceLimitRule : IDoctorRule
{
    private const double WarnShare = 0.85;

    public string Id => "resource-limits";
    public string Area => "memory";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        if (input.Environment is not { } environment)
            yield break;
        long rss = input.InfoInt64("memory", "used_memory_rss");
        if (environment.CgroupMemoryLimitBytes is long limit && rss >= limit * WarnShare)
        {
            yield return new Finding
            {
                Rule = Id,
                Area = Area,
                Severity = FindingSeverity.Critical,
                Title = "Close to the container's memory limit",
                Seen = $"The process uses {Human.Bytes(rss)} resident, {Human.Percent(rss * 100.0 / limit)} of the cgroup limit {Human.Bytes(limit)}: the kernel kills it at the limit.",
                Advice = "Set maxmemory well below the container limit (leave room for the runtime and client buffers), or raise the limit.",
                Evidence = new() { ["rss"] = rss.ToString(System.Globalization.CultureInfo.InvariantCulture), ["cgroup_memory_limit"] = limit.ToString(System.Globalization.CultureInfo.InvariantCulture) },
                Chart = MetricNames.ResidentBytes,
            };
        }
        if (environment.MaxFileDescriptors > 0 && environment.OpenFileDescriptors >= environment.MaxFileDescriptors * WarnShare)
        {
            yield return new Finding
            {
                Rule = Id,
                Area = "clients",
                Severity = FindingSeverity.Warning,
                Title = "Close to the open files limit",
                Seen = $"{environment.OpenFileDescriptors} of {environment.MaxFileDescriptors} file descriptors are open: new connections will fail to be accepted.",
                Advice = "Raise the process's open files limit (LimitNOFILE in the service unit, ulimit -n), or lower maxclients.",
                Evidence = new() { ["open_fds"] = environment.OpenFileDescriptors.ToString(System.Globalization.CultureInfo.InvariantCulture), ["max_fds"] = environment.MaxFileDescriptors.ToString(System.Globalization.CultureInfo.InvariantCulture) },
                Chart = MetricNames.ConnectedClients,
            };
        }
    }
}
