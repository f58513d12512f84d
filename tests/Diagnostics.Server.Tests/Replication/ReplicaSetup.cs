using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.Replication;

/// <summary>
/// A real redis-server 7.0 master and this server as its replica, and the waits the replication
/// tests share: the link up and the replica's offset at the master's.
/// </summary>
internal static class ReplicaSetup
{
    /// <summary>A master that starts a full sync at once (no diskless delay) and allows DEBUG.</summary>
    public static RealRedisServer StartMaster(params string[] arguments)
        => RealRedisServer.Start(["--repl-diskless-sync-delay", "0", "--enable-debug-command", "yes", .. arguments]);

    /// <summary>Points <paramref name="replica"/> at <paramref name="master"/> and waits until it applied everything the master has.</summary>
    public static void Attach(RespClient replica, RealRedisServer master)
    {
        RespAssert.Ok(replica.Call("REPLICAOF", "127.0.0.1", master.Port.ToString()));
        using var m = master.Connect();
        WaitInSync(m, replica);
    }

    /// <summary>Polls until the replica's link is up and its offset is the master's.</summary>
    public static void WaitInSync(RespClient master, RespClient replica, int timeoutMs = 15_000)
    {
        string state = "";
        Poll.Until(() =>
        {
            var r = InfoFields.Read(replica, "replication");
            long masterOffset = InfoFields.GetInt64(master, "replication", "master_repl_offset");
            state = $"replica: {string.Join(' ', r.Select(kv => kv.Key + "=" + kv.Value))}; master offset {masterOffset}";
            return r.GetValueOrDefault("master_link_status") == "up" && r.GetValueOrDefault("slave_repl_offset") == masterOffset.ToString();
        }, () => "the replica caught up with its master: " + state, timeoutMs);
    }

    public static long MasterStat(RespClient master, string field) => InfoFields.GetInt64(master, "stats", field);
}
