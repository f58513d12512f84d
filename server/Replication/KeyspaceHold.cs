using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Replication;

/// <summary>
/// Runs an action on the link's own thread with every shard held, again and again without
/// allocating: in inline mode through the keyspace gate (waiting as a pool thread would, since the
/// link's thread serves no socket), in executor mode by parking each shard's executor. The master's
/// stream is applied a parsed batch at a time under one such hold: the simplest sound choice, as a
/// batch may touch any key, SELECT any database and hold MULTI/EXEC, FLUSHALL or a function load.
/// </summary>
internal sealed class KeyspaceHold : ShardWork
{
    private readonly Keyspace _keyspace;
    private readonly Park[]? _parks;
    private Action? _action;

    public KeyspaceHold(Keyspace keyspace)
    {
        _keyspace = keyspace;
        if (keyspace.Mode == ExecutionMode.Executor)
        {
            _parks = new Park[keyspace.ShardCount];
            for (int i = 0; i < _parks.Length; i++)
                _parks[i] = new Park();
        }
    }

    /// <summary>Runs <paramref name="action"/> (a delegate made once by the caller) holding every shard. The caller holds none.</summary>
    public void Run(Action action)
    {
        if (_parks is null)
        {
            _action = action;
            try
            {
                _keyspace.Gate.Run(this);
            }
            finally
            {
                _action = null;
            }
            return;
        }
        var shards = _keyspace.Shards;
        int parked = 0;
        try
        {
            // Ascending order, as every other holder of several shards takes them.
            for (; parked < shards.Length; parked++)
                _parks[parked].Hold(shards[parked]);
            action();
        }
        finally
        {
            while (parked > 0)
                _parks[--parked].Release();
        }
    }

    public override void Execute(Shard shard) => throw new InvalidOperationException("the keyspace hold runs across every shard");

    public override void ExecuteHoldingAll(Shard[] shards) => _action!();

    /// <summary>Keeps one executor still until released; reused hold after hold.</summary>
    private sealed class Park : ShardWork
    {
        // Semaphores, not events: a signal is never lost whatever the interleaving.
        private readonly SemaphoreSlim _held = new(0);
        private readonly SemaphoreSlim _released = new(0);

        public void Hold(Shard shard)
        {
            shard.Post(this);
            _held.Wait();
        }

        public void Release() => _released.Release();

        public override void Execute(Shard shard)
        {
            _held.Release();
            _released.Wait();
        }
    }
}
