using Diagnostics.Contracts;
using Diagnostics.Doctor;
using Diagnostics.Doctor.Rules;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Diagnostics.Disk;
using Diagnostics.Server.Diagnostics.History;
using Diagnostics.Server.Diagnostics.SlowCommands;
using Diagnostics.Studio.Security;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>
/// The doctor over the live server: the same contract views the API serves and the debug package
/// holds become the rules' input, so a package examined offline gives the same findings.
/// </summary>
public static class DoctorView
{
    /// <summary>How far back the live doctor's history goes (a package holds the hour).</summary>
    public const int HistorySeconds = 600;

    /// <param name="walkKeyspace">False for looks made in the background (the package triggers), which must not hold every shard.</param>
    public static DoctorInput Input(DataServer server, bool walkKeyspace = true)
    {
        var input = new DoctorInput
        {
            TakenUnixMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(),
            Info = InfoView.Build(server, []),
            // The rules look back five minutes at most: ten are plenty, and a sixth of the hour's copy.
            History = server.Sampler.History.Window(DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - HistorySeconds * 1000, long.MaxValue),
            // The thread list the sampler read this second, and no per-thread I/O counters (no rule
            // reads them): two /proc files per thread less on each look.
            Threads = ThreadView.Build(server.Sampler.ThreadCpu, server.Sampler.LastKernelThreads, includeKernelIo: false),
            Clients = ClientView.Build(server),
            ClosedClients = server.Clients.Closed.Recent(),
            Commands = CommandView.Build(server),
            Latency = LatencyView.Build(server),
            SlowLog = SlowLogView.Build(server),
            SlowSummary = SlowLogView.Summary(server),
            AclLog = AclLogView.Build(server),
            Memory = MemoryView.Build(server),
            HotKeys = HotKeysView.Build(server),
            Runtime = RuntimeView.Build(),
            Environment = EnvironmentView.Build(),
            DiskIo = DiskIoView.Build(),
            Replication = ReplicationView.Build(server),
            Monitor = server.Monitor.Report(),
            Config = Redaction.Settings(server.Config),
            InFlight = InFlightView.Build(),
        };
        // The walk holds every shard: only when a rule will name what it finds (the biggest keys
        // for memory near maxmemory, the consumer groups whose pending lists grow).
        bool wanted = MemoryNearLimitRule.Applies(server.Keyspace.Eviction.UsedMemory, server.Keyspace.Eviction.MaxMemory)
            || StreamPendingRule.GrowthSeen(input.RecentCount(MetricNames.StreamDeliveriesPerSecond, 300), input.RecentCount(MetricNames.StreamAcksPerSecond, 300));
        return walkKeyspace && wanted ? input with { Keyspace = KeyspaceView.Build(server) } : input;
    }

    /// <summary>The findings over everything (the package triggers, the DOCTOR commands' RESP callers, whose ACL already let them run it).</summary>
    public static DoctorReport Examine(DataServer server, bool walkKeyspace = true) => DoctorRules.Examine(Input(server, walkKeyspace));

    /// <summary>The findings a login may see: the rules run over the parts its permissions open (<see cref="PermittedInput"/>).</summary>
    public static DoctorReport Examine(DataServer server, StudioPermissions seenBy) =>
        DoctorRules.Examine(PermittedInput.Of(Input(server, walkKeyspace: (seenBy & StudioPermissions.Keys) != 0), seenBy));
}
