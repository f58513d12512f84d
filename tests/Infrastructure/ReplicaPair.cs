using System.Diagnostics;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// Two of our servers, one a replica of the other, in sync when started: for the replication
/// diagnostics (the master's view of its replica, the replica's of its link). The replica can be
/// frozen (SIGSTOP) to stand for a replica that stopped answering, and thawed again.
/// </summary>
public sealed class ReplicaPair : IDisposable
{
    private bool _frozen;

    private ReplicaPair(ServerProcess master, ServerProcess replica)
    {
        Master = master;
        Replica = replica;
    }

    public ServerProcess Master { get; }
    public ServerProcess Replica { get; }

    /// <summary>"127.0.0.1:port": how the master names the replica in its diagnostics.</summary>
    public string ReplicaKey => $"127.0.0.1:{Replica.Port}";

    public static ReplicaPair Start(string[] masterArguments, string[]? replicaArguments = null)
    {
        var master = ServerProcess.Start(masterArguments);
        ServerProcess? replica = null;
        try
        {
            replica = ServerProcess.Start(replicaArguments ?? []);
            var pair = new ReplicaPair(master, replica);
            using var r = replica.Connect();
            RespAssert.Ok(r.Call("REPLICAOF", "127.0.0.1", master.Port.ToString()));
            pair.WaitInSync();
            return pair;
        }
        catch
        {
            replica?.Dispose();
            master.Dispose();
            throw;
        }
    }

    /// <summary>Polls until the replica's link is up and it applied everything the master has.</summary>
    public void WaitInSync(int timeoutMs = 20_000)
    {
        using var m = Master.Connect();
        using var r = Replica.Connect();
        string state = "";
        Poll.Until(() =>
        {
            var info = InfoFields.Read(r, "replication");
            long masterOffset = InfoFields.GetInt64(m, "replication", "master_repl_offset");
            state = $"replica: {info.GetValueOrDefault("master_link_status")} at {info.GetValueOrDefault("slave_repl_offset")}; master at {masterOffset}";
            return info.GetValueOrDefault("master_link_status") == "up" && info.GetValueOrDefault("slave_repl_offset") == masterOffset.ToString();
        }, () => "the replica caught up with its master: " + state, timeoutMs);
    }

    /// <summary>
    /// Runs <paramref name="step"/>; when it fails and either server has exited, the failure says
    /// which and carries what it printed (a refused connection alone does not tell a crash).
    /// </summary>
    public T Expect<T>(Func<T> step)
    {
        try
        {
            return step();
        }
        catch (Exception ex) when (Master.HasExited || Replica.HasExited)
        {
            var gone = Master.HasExited ? Master : Replica;
            throw new Xunit.Sdk.XunitException($"the {(gone == Master ? "master" : "replica")} exited: {ex.Message}\n{gone.Output}");
        }
    }

    /// <summary>Stops the replica's process (SIGSTOP): its connection stays open and nothing answers on it.</summary>
    public void Freeze()
    {
        Signal("STOP");
        _frozen = true;
    }

    public void Thaw()
    {
        Signal("CONT");
        _frozen = false;
    }

    private void Signal(string name)
    {
        using var kill = Process.Start(new ProcessStartInfo("kill", $"-{name} {Replica.Pid}") { UseShellExecute = false })!;
        kill.WaitForExit();
        Assert.Equal(0, kill.ExitCode);
    }

    public void Dispose()
    {
        if (_frozen)
            Thaw();
        Replica.Dispose();
        Master.Dispose();
    }
}
