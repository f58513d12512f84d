using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Persistence;

/// <summary>The AOF as the shard cron's propagation sink: its DELs are appended like a command's writes.</summary>
internal sealed class AofPropagationSink(AppendOnlyFile aof) : IPropagationSink
{
    public bool Enabled => aof.Enabled;

    public ICommandPropagation NewBuffer() => new AofRecordBuffer();

    public void Commit(ICommandPropagation buffer)
    {
        var log = (AofRecordBuffer)buffer;
        if (log.IsEmpty)
            return;
        aof.Append(log);
        log.Clear();
    }
}
