using Diagnostics.Server.Commands;

namespace Diagnostics.Server.Diagnostics.HotKeys;

/// <summary>
/// One shard's hot keys: the space-saving top-k of sampled key accesses (a key not in the table
/// takes the place of the least counted one, with that count plus one, so a key hotter than the
/// rest cannot be missed), halved once a second so the counts follow what is hot now. Each entry
/// keeps the key's first bytes, the command that last touched it and the last clients.
///
/// Written by whoever holds the shard (a sampled command, the cron's decay); a writer that finds
/// another mid-update skips its sample rather than wait. Readers (the API, the doctor) copy the
/// table under a sequence number and retry when a writer moved it meanwhile. Nothing allocates:
/// key bytes go into slots made at start.
/// </summary>
public sealed class HotKeySketch
{
    public const int Slots = 16;
    /// <summary>Key bytes kept per entry; a longer key is shown cut (and told apart by hash and length).</summary>
    public const int KeyBytesKept = 64;
    private const int ClientsKept = 4;

    private readonly int _shard;
    private readonly Slot[] _slots = new Slot[Slots];
    private int _used;
    private long _total;
    // Odd while a writer is inside.
    private int _version;
    private long _nextDecayMs;

    public HotKeySketch(int shard)
    {
        _shard = shard;
        for (int i = 0; i < Slots; i++)
            _slots[i] = new Slot();
    }

    private sealed class Slot
    {
        public readonly byte[] Key = new byte[KeyBytesKept];
        public readonly long[] Clients = new long[ClientsKept];
        public int KeyLength;
        public uint Hash;
        public int Database;
        public long Count;
        public CommandSpec? Command;
        public int NextClient;
    }

    /// <summary>One sampled access to <paramref name="key"/> (its shard held by the caller).</summary>
    public void Sample(int database, ReadOnlySpan<byte> key, uint hash, CommandSpec command, long clientId)
    {
        int version = Volatile.Read(ref _version);
        if ((version & 1) != 0 || Interlocked.CompareExchange(ref _version, version + 1, version) != version)
            return; // another writer is in: one sample less
        try
        {
            _total++;
            Slot? slot = Find(database, key, hash);
            if (slot is null)
            {
                slot = _used < Slots ? _slots[_used++] : Least();
                slot.Count++; // space-saving: the newcomer inherits the evicted count
                int kept = Math.Min(key.Length, KeyBytesKept);
                key[..kept].CopyTo(slot.Key);
                slot.KeyLength = key.Length;
                slot.Hash = hash;
                slot.Database = database;
                Array.Clear(slot.Clients);
                slot.NextClient = 0;
            }
            else
            {
                slot.Count++;
            }
            slot.Command = command;
            if (Array.IndexOf(slot.Clients, clientId) < 0)
            {
                slot.Clients[slot.NextClient] = clientId;
                slot.NextClient = (slot.NextClient + 1) % ClientsKept;
            }
        }
        finally
        {
            Volatile.Write(ref _version, version + 2);
        }
    }

    private Slot? Find(int database, ReadOnlySpan<byte> key, uint hash)
    {
        int kept = Math.Min(key.Length, KeyBytesKept);
        for (int i = 0; i < _used; i++)
        {
            var slot = _slots[i];
            if (slot.Hash == hash && slot.KeyLength == key.Length && slot.Database == database && key[..kept].SequenceEqual(slot.Key.AsSpan(0, kept)))
                return slot;
        }
        return null;
    }

    private Slot Least()
    {
        Slot least = _slots[0];
        for (int i = 1; i < Slots; i++)
            if (_slots[i].Count < least.Count)
                least = _slots[i];
        return least;
    }

    /// <summary>The shard's cron, holding the shard: halves the counts once a second, so they weigh the last seconds most.</summary>
    public void DecayIfDue(long nowMs)
    {
        if (nowMs < _nextDecayMs)
            return;
        _nextDecayMs = nowMs + 1000;
        int version = Volatile.Read(ref _version);
        if ((version & 1) != 0 || Interlocked.CompareExchange(ref _version, version + 1, version) != version)
            return;
        try
        {
            _total >>= 1;
            for (int i = 0; i < _used; i++)
                _slots[i].Count >>= 1;
        }
        finally
        {
            Volatile.Write(ref _version, version + 2);
        }
    }

    /// <summary>A consistent copy of the entries with a count, or false when writers kept moving it.</summary>
    public bool TryRead(List<HotKeyEntry> into, out long total)
    {
        for (int attempt = 0; attempt < 16; attempt++)
        {
            int before = Volatile.Read(ref _version);
            if ((before & 1) != 0)
            {
                Thread.SpinWait(16);
                continue;
            }
            int start = into.Count;
            total = _total;
            int used = Math.Min(_used, Slots);
            for (int i = 0; i < used; i++)
            {
                var slot = _slots[i];
                if (slot.Count <= 0)
                    continue;
                int kept = Math.Min(slot.KeyLength, KeyBytesKept);
                into.Add(new HotKeyEntry(_shard, slot.Database, slot.Key.AsSpan(0, kept).ToArray(), slot.KeyLength, slot.Count,
                    slot.Command?.FullName ?? "?", Array.FindAll(slot.Clients, id => id != 0)));
            }
            if (Volatile.Read(ref _version) == before)
                return true;
            into.RemoveRange(start, into.Count - start);
        }
        total = 0;
        return false;
    }
}

/// <summary>A sampled hot key as read from a shard's sketch: its first bytes, its full length, its decayed sample count, the last command and clients.</summary>
public sealed record HotKeyEntry(int Shard, int Database, byte[] Key, int KeyLength, long Count, string Command, long[] Clients);
