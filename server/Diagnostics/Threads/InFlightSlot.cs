using System.Diagnostics;

namespace Diagnostics.Server.Diagnostics.Threads;

/// <summary>
/// What one thread is doing right now, written only by that thread and read by anyone without a
/// lock: the cheap answer to "what is it doing?". The owner stores a few fields around each piece
/// of work; a reader checks a version number before and after copying them and retries when the
/// owner moved on meanwhile, so it never pairs one command's name with another's start time.
/// The activity is a string the caller already holds (a command's name, a constant), so marking
/// work allocates nothing.
/// </summary>
public sealed class InFlightSlot
{
    // Odd while the owner is changing the fields (a seqlock).
    private int _version;
    private string? _activity;
    private long _clientId;
    private int _database;
    private long _startedTimestamp;

    public void Begin(string activity, long clientId, int database, long startedTimestamp)
    {
        Volatile.Write(ref _version, _version + 1);
        _activity = activity;
        _clientId = clientId;
        _database = database;
        _startedTimestamp = startedTimestamp;
        Volatile.Write(ref _version, _version + 1);
    }

    /// <summary>Whether the owner is doing nothing marked (read by the owner only).</summary>
    public bool IsIdle => _activity is null;

    /// <summary>Server work with no client: an fsync, an expire cycle.</summary>
    public void Begin(string activity) => Begin(activity, 0, 0, Stopwatch.GetTimestamp());

    public void End()
    {
        Volatile.Write(ref _version, _version + 1);
        _activity = null;
        Volatile.Write(ref _version, _version + 1);
    }

    /// <summary>A consistent copy of the slot, or false when the thread is idle (or too busy changing it to catch).</summary>
    public bool TryRead(out string activity, out long clientId, out int database, out long startedTimestamp)
    {
        for (int attempt = 0; attempt < 8; attempt++)
        {
            int before = Volatile.Read(ref _version);
            if ((before & 1) != 0)
            {
                Thread.SpinWait(4);
                continue;
            }
            string? current = Volatile.Read(ref _activity);
            clientId = Volatile.Read(ref _clientId);
            database = Volatile.Read(ref _database);
            startedTimestamp = Volatile.Read(ref _startedTimestamp);
            if (Volatile.Read(ref _version) != before)
                continue;
            activity = current ?? "";
            return current is not null;
        }
        activity = "";
        clientId = 0;
        database = 0;
        startedTimestamp = 0;
        return false;
    }
}
