using Diagnostics.Contracts;
using Diagnostics.Doctor.Rules;

namespace Diagnostics.Doctor;

/// <summary>
/// Runs every rule over one input and returns the findings, worst first. The rule table is the
/// only list of rules: a new rule is a new entry here.
/// </summary>
public static class DoctorRules
{
    public static IReadOnlyList<IDoctorRule> All { get; } =
    [
        new AofWriteErrorRule(),
        new MemoryNearLimitRule(),
        new ResourceLimitRule(),
        new ExposedWithoutPasswordRule(),
        new EvictionRule(),
        new AllocatorFragmentationRule(),
        new OutputBufferRule(),
        new ClientsDisconnectedRule(),
        new RejectedConnectionsRule(),
        new AuthFailuresRule(),
        new AclDenialsRule(),
        new TlsCertificateExpiryRule(),
        new FsyncLatencyRule(),
        new KernelFsyncRule(),
        new UnaccountedWritesRule(),
        new LatencySpikesRule(),
        new SlowCommandsRule(),
        new BusyScriptRule(),
        new GcPauseRule(),
        new ThreadPoolStarvationRule(),
        new TooBusyRule(),
        new StreamPendingRule(),
        new HotThreadRule(),
        new CpuSaturationRule(),
        new HotKeyRule(),
        new KeyspaceMissRule(),
        new NoPersistenceRule(),
        new ReplicaLagRule(),
        new BacklogTooSmallRule(),
        new SyncLoopRule(),
    ];

    public static DoctorReport Examine(DoctorInput input)
    {
        var findings = new List<Finding>();
        foreach (var rule in All)
        {
            try
            {
                findings.AddRange(rule.Examine(input));
            }
            catch (Exception ex) when (ex is not OutOfMemoryException)
            {
                // One broken rule (or a package missing what it reads) must not hide the others.
                findings.Add(new Finding
                {
                    Rule = rule.Id,
                    Area = rule.Area,
                    Severity = FindingSeverity.Info,
                    Title = $"Rule {rule.Id} could not run",
                    Seen = $"{ex.GetType().Name}: {ex.Message}",
                    Advice = "The other rules ran; report this with the debug package.",
                });
            }
        }
        findings.Sort((a, b) => b.Severity.CompareTo(a.Severity));
        return new DoctorReport(input.TakenUnixMs, All.Count, findings);
    }
}
