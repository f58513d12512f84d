namespace Diagnostics.Server.Engine;

/// <summary>
/// Records an access to an entry, as Redis does on every lookup that is not NOTOUCH: the LFU
/// counter decays for the time since the last access, then may grow (updateLFU), and the access
/// clock moves to now (LRU). Both are kept whatever the policy, so switching it at run time
/// finds usable figures.
/// </summary>
public static unsafe class EntryAccess
{
    public static void Record(Entry* entry)
    {
        uint now = LruClock.Now;
        byte counter = LfuCounter.Decayed(entry->Frequency, entry->AccessClock, now);
        entry->Frequency = LfuCounter.Increment(counter, Random.Shared);
        entry->AccessClock = now;
    }
}
