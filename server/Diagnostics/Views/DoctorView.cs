using Diagnostics.Contracts;
using Diagnostics.Doctor;
using Diagnostics.Doctor.Rules;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Diagnostics.Disk;
using Diagnostics.Server.Diagnostics.History;
using Diagnostics.Server.Diagnostics.SlowCommands;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>
/// The doctor over the live server: the same contract views the API serves and the debug package
/// holds become the rules' input, so a package examined offline gives the same findings.
/// </summary>
public static class DoctorView
{
    public static DoctorInput Input(DataServer server) => new()
    {
        TakenUnixMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(),
        Info = InfoView.Build(server, []),
        History = server.Sampler.History.Window(DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 3_600_000, long.MaxValue),
        Threads = ThreadView.Build(server.Sampler.ThreadCpu),
        Clients = ClientView.Build(server),
        ClosedClients = server.Clients.Closed.Recent(),
        Commands = CommandView.Build(server),
        Latency = LatencyView.Build(server),
        SlowLog = SlowLogView.Build(server),
        SlowSummary = SlowLogView.Summary(server),
        Memory = MemoryView.Build(server),
        HotKeys = HotKeysView.Build(server),
        // The walk holds every shard: only when the memory rule will name the biggest keys.
        Keyspace = MemoryNearLimitRule.Applies(server.Keyspace.Eviction.UsedMemory, server.Keyspace.Eviction.MaxMemory) ? KeyspaceView.Build(server) : null,
        Runtime = RuntimeView.Build(),
        Environment = EnvironmentView.Build(),
        DiskIo = DiskIoView.Build(),
        Monitor = server.Monitor.Report(),
        Config = Redaction.Settings(server.Config),
        InFlight = InFlightView.Build(),
    };

    public static DoctorReport Examine(DataServer server) => DoctorRules.Examine(Input(server));
}
