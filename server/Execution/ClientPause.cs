using Diagnostics.Server.Commands;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Execution;

/// <summary>What CLIENT PAUSE holds: nothing, the commands that may change the dataset, or every command.</summary>
public enum PauseMode
{
    None = 0,
    Write = 1,
    All = 2,
}

/// <summary>
/// CLIENT PAUSE / UNPAUSE (Redis's pauseClients): while paused, a connection whose next command
/// is held waits (an await, no thread and no shard held) until the pause ends, then runs it and
/// what follows in order. A second pause keeps the stronger mode and the later end, as Redis does.
/// Writes pausing also stops active expiry and eviction, so the dataset stands still for a failover.
/// </summary>
public sealed class ClientPause : IDisposable
{
    private readonly Keyspace _keyspace;
    private readonly Lock _lock = new();
    private readonly Timer _timer;
    // Read before every routed command: the one field a connection checks when nothing is paused.
    private volatile PauseMode _mode;
    private long _endUnixMs;
    private TaskCompletionSource _ended = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public ClientPause(Keyspace keyspace)
    {
        _keyspace = keyspace;
        _timer = new Timer(_ => ExpireIfDue(), null, Timeout.Infinite, Timeout.Infinite);
    }

    public PauseMode Mode => _mode;

    public long EndUnixMs => Volatile.Read(ref _endUnixMs);

    /// <summary>Pauses until <paramref name="endUnixMs"/>, or extends/upgrades the current pause.</summary>
    public void Pause(long endUnixMs, PauseMode mode)
    {
        lock (_lock)
        {
            if (mode > _mode)
                _mode = mode;
            if (endUnixMs > _endUnixMs)
                _endUnixMs = endUnixMs;
            _keyspace.WritesPaused = true;
            long due = Math.Max(0, _endUnixMs - DateTimeOffset.UtcNow.ToUnixTimeMilliseconds());
            _timer.Change(Math.Min(due, int.MaxValue - 1), Timeout.Infinite);
        }
    }

    /// <summary>CLIENT UNPAUSE, or the timeout: the held connections run their commands.</summary>
    public void Unpause()
    {
        TaskCompletionSource ended;
        lock (_lock)
        {
            if (_mode == PauseMode.None)
                return;
            _mode = PauseMode.None;
            _endUnixMs = 0;
            _keyspace.WritesPaused = false;
            _timer.Change(Timeout.Infinite, Timeout.Infinite);
            ended = _ended;
            _ended = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        }
        ended.TrySetResult();
    }

    private void ExpireIfDue()
    {
        long remaining;
        lock (_lock)
        {
            if (_mode == PauseMode.None)
                return;
            remaining = _endUnixMs - DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
            if (remaining > 0)
            {
                // The timer fired early (clock adjustment): look again when the end is due.
                _timer.Change(Math.Min(remaining, int.MaxValue - 1), Timeout.Infinite);
                return;
            }
        }
        Unpause();
    }

    /// <summary>Completes when the current pause ends (at once when none is on).</summary>
    public Task Ended
    {
        get
        {
            lock (_lock)
                return _mode == PauseMode.None ? Task.CompletedTask : _ended.Task;
        }
    }

    /// <summary>
    /// Redis's processCommand rule: under ALL every command waits; under WRITE the commands that
    /// may change the dataset or be propagated (writes, PUBLISH, PFCOUNT, scripts), and an EXEC
    /// whose queue holds one. A monitor (a replica to Redis) is never held.
    /// </summary>
    public static bool Holds(PauseMode mode, ClientSession client, CommandSpec spec, CommandSpec exec)
    {
        if (mode == PauseMode.None || client.IsMonitor)
            return false;
        if (mode == PauseMode.All)
            return true;
        const CommandFlags changes = CommandFlags.Write | CommandFlags.MayReplicate;
        if ((spec.Flags & changes) != 0)
            return true;
        return ReferenceEquals(spec, exec) && client.Transaction is { InMulti: true } transaction && transaction.QueuedAny(changes);
    }

    public void Dispose() => _timer.Dispose();
}
