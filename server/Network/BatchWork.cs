using System.Threading.Tasks.Sources;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Network;

/// <summary>
/// A run of consecutive commands from one connection that all route to the same shard, handed to
/// that shard's executor in one go (in inline mode: run here, or by the shard's holder); or, in
/// inline mode, a run of whole-keyspace commands (scripts) for the <see cref="KeyspaceGate"/>. One
/// instance per connection, reused for every batch, so the hand-off allocates nothing; completion
/// wakes the connection through a reusable value task.
/// </summary>
internal sealed class BatchWork(ClientConnection client) : ShardWork, IValueTaskSource
{
    private ManualResetValueTaskSourceCore<bool> _completion = new() { RunContinuationsAsynchronously = true };
    private int _from;
    private int _to;
    private bool _mayRunLong;

    /// <summary>Prepares the work for commands [from, to) of the connection's current batch.</summary>
    public ValueTask Prepare(int from, int to, bool mayRunLong = false)
    {
        _from = from;
        _to = to;
        _mayRunLong = mayRunLong;
        GivenBackAt = -1;
        _completion.Reset();
        return new ValueTask(this, _completion.Version);
    }

    public override void Execute(Shard shard)
    {
        // Whoever runs this holds the shard: the client's effects scope is the shard's until it lets
        // go. A busy script's hook runs work too (answering BUSY), and gets its own scope back.
        var holders = shard.Effects;
        shard.Effects = client.Effects;
        try
        {
            for (int i = _from; i < _to; i++)
                client.ExecuteCommand(i);
        }
        finally
        {
            // Still holding the shard: the AOF gets these writes in the order they ran.
            client.CommitLoggedWrites();
            shard.Effects = holders;
            if (shard.Mode == ExecutionMode.Executor)
            {
                _completion.RunContinuationsAsynchronously = true;
                _completion.SetResult(true);
            }
        }
    }

    /// <summary>The command that gave itself back (a script that may run long, read on a socket thread): it and those after it did not run. -1: all ran.</summary>
    public int GivenBackAt { get; private set; } = -1;

    public override void ExecuteHoldingAll(Shard[] shards)
    {
        // Every shard is the client's while it runs: a script may touch keys it did not declare.
        // Held by a busy script (whose hook runs this), every shard has the script's scope.
        var holders = shards[0].Effects;
        var effects = client.Effects;
        foreach (var shard in shards)
            shard.Effects = effects;
        try
        {
            for (int i = _from; i < _to; i++)
            {
                client.ExecuteCommand(i);
                if (client.RunElsewhere)
                {
                    client.RunElsewhere = false;
                    GivenBackAt = i;
                    break;
                }
            }
        }
        finally
        {
            client.CommitLoggedWrites();
            foreach (var shard in shards)
                shard.Effects = holders;
        }
    }

    public override bool MayRunLong => _mayRunLong;

    public override long PendingOutputBytes => client.Reply.PendingBytes;

    public override void HandOffCompleted(Exception? failure, bool continueHere)
    {
        _completion.RunContinuationsAsynchronously = !continueHere;
        if (failure is null)
            _completion.SetResult(true);
        else
            _completion.SetException(failure);
    }

    void IValueTaskSource.GetResult(short token) => _completion.GetResult(token);
    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _completion.GetStatus(token);
    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _completion.OnCompleted(continuation, state, token, flags);
}
