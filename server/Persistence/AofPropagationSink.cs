using Diagnostics.Server.Engine;
using Diagnostics.Server.Replication;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// The shard cron's propagation sink (the DELs of keys it expired or evicted): appended like a
/// command's writes, to the AOF and to the replication stream of a master.
/// </summary>
internal sealed class AofPropagationSink(AppendOnlyFile aof, ReplicationMaster master) : IPropagationSink
{
    public bool Enabled => aof.Enabled || master.Propagates;

    public ICommandPropagation NewBuffer() => new AofRecordBuffer();

    public void Commit(ICommandPropagation buffer)
    {
        var log = (AofRecordBuffer)buffer;
        if (log.IsEmpty)
            return;
        if (aof.Enabled)
            aof.Append(log);
        if (master.Propagates)
            master.Backlog.Append(log);
        log.Clear();
    }
}
