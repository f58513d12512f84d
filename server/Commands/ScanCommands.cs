using System.Buffers;
using System.Buffers.Text;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// Commands that walk the whole keyspace of the selected database: KEYS, SCAN and RANDOMKEY. They
/// run with every shard held (AllShards) and visit each shard's part of the database in turn.
/// </summary>
public static unsafe class ScanCommands
{
    internal const string InvalidCursor = "ERR invalid cursor";

    public static void Register(CommandTable table)
    {
        const string g = "generic";
        table.Add(new CommandSpec("keys", 2, ReadOnly | AllShards, 0, 0, 0, Keys, g, "Returns all key names that match a pattern.", "1.0.0",
            "O(N) with N being the number of keys in the database, under the assumption that the key names in the database and the given pattern have limited length.")
        { Arguments = [new("pattern", "pattern")] });
        table.Add(new CommandSpec("scan", -2, ReadOnly | AllShards, 0, 0, 0, Scan, g, "Iterates over the key names in the database.", "2.8.0",
            "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.")
        {
            Arguments = [new("cursor", "integer"),
                new("pattern", "pattern", Optional: true, Token: "MATCH"),
                new("count", "integer", Optional: true, Token: "COUNT"),
                new("type", "string", Optional: true, Token: "TYPE")],
        });
        table.Add(new CommandSpec("randomkey", 1, ReadOnly | AllShards, 0, 0, 0, RandomKey, g, "Returns a random key name from the database."));
    }

    /// <summary>
    /// Counts the matches in a first pass and writes them in a second, so the reply needs no
    /// buffer however many keys match. Expired keys are skipped, not deleted, as in Redis.
    /// </summary>
    private static void Keys(ref CommandContext c)
    {
        var shards = c.Keyspace.Shards;
        int dbIndex = c.Client.DatabaseIndex;
        ReadOnlySpan<byte> pattern = c.Arg(1);
        fixed (byte* patternBytes = pattern)
        {
            long matched = 0;
            foreach (var shard in shards)
            {
                var counter = new KeysVisitor(shard.Databases[dbIndex], patternBytes, pattern.Length, c.NowMs, null);
                shard.Databases[dbIndex].Keys.ForEach(ref counter);
                matched += counter.Matched;
            }
            c.Reply.ArrayHeader(matched);
            foreach (var shard in shards)
            {
                var writer = new KeysVisitor(shard.Databases[dbIndex], patternBytes, pattern.Length, c.NowMs, c.Reply);
                shard.Databases[dbIndex].Keys.ForEach(ref writer);
            }
        }
    }

    private struct KeysVisitor(Database database, byte* pattern, int patternLength, long nowMs, RespWriter? reply) : IEntryVisitor
    {
        private readonly bool _all = GlobPattern.MatchesAll(new ReadOnlySpan<byte>(pattern, patternLength));
        public long Matched;

        public void Visit(Entry* entry)
        {
            if (database.IsExpired(entry, nowMs))
                return;
            ReadOnlySpan<byte> key = Entry.KeyOf(entry);
            if (!_all && !GlobPattern.IsMatch(new ReadOnlySpan<byte>(pattern, patternLength), key))
                return;
            Matched++;
            reply?.Bulk(key);
        }
    }

    /// <summary>
    /// SCAN over all shards. The cursor packs the shard being scanned and that shard's own
    /// reverse-binary table cursor: cursor = tableCursor * shardCount + shard. Within a shard the
    /// table cursor guarantees every key present for the whole scan is returned at least once,
    /// through growth, shrinking and rehashing; the shards are scanned one after another.
    /// </summary>
    private static void Scan(ref CommandContext c)
    {
        if (!TryParseCursor(c.Arg(1), out ulong cursor))
        {
            c.Error(InvalidCursor);
            return;
        }
        long count = 10;
        int patternIndex = -1;
        bool typeFilter = false, unknownType = false;
        Engine.ValueType type = default;
        for (int i = 2; i < c.ArgCount; i++)
        {
            bool hasValue = i + 1 < c.ArgCount;
            if (c.ArgIs(i, "count"u8) && hasValue)
            {
                if (!TryCount(ref c, i + 1, out count))
                    return;
            }
            else if (c.ArgIs(i, "match"u8) && hasValue)
            {
                patternIndex = i + 1;
            }
            else if (c.ArgIs(i, "type"u8) && hasValue)
            {
                typeFilter = true;
                // Redis 7 answers an unknown type name with an empty iteration, not an error.
                unknownType = !ValueTypeNames.TryParse(c.Arg(i + 1), out type);
            }
            else
            {
                c.SyntaxError();
                return;
            }
            i++;
        }

        var shards = c.Keyspace.Shards;
        int dbIndex = c.Client.DatabaseIndex;
        ulong shardCount = (ulong)shards.Length;
        int shard = (int)(cursor % shardCount);
        ulong tableCursor = cursor / shardCount;
        ReadOnlySpan<byte> pattern = patternIndex < 0 ? "*"u8 : c.Arg(patternIndex);
        var collector = new ScanCollector(ArrayPool<nint>.Shared.Rent(64), shards[shard].Databases[dbIndex], c.NowMs);
        try
        {
            fixed (byte* patternBytes = pattern)
            {
                collector.SetFilter(patternBytes, pattern.Length, typeFilter, unknownType, type);
                // As Redis: stop after COUNT keys were looked at, or after COUNT*10 bucket steps
                // so a sparse table cannot make one call walk all of it.
                long steps = count > long.MaxValue / 10 ? long.MaxValue : count * 10;
                while (true)
                {
                    collector.Database = shards[shard].Databases[dbIndex];
                    KeyTable table = collector.Database.Keys;
                    do
                    {
                        tableCursor = table.Scan(tableCursor, ref collector);
                    } while (tableCursor != 0 && steps-- > 0 && collector.Sampled < count);
                    if (tableCursor != 0)
                        break;
                    shard++;
                    if (shard == shards.Length || steps <= 0 || collector.Sampled >= count)
                        break;
                }
            }
            ulong next = shard == shards.Length ? 0 : tableCursor * shardCount + (ulong)shard;
            ReplyAndExpire(ref c, ref collector, next);
        }
        finally
        {
            ArrayPool<nint>.Shared.Return(collector.Items);
        }
    }

    /// <summary>
    /// Writes the reply, leaving out keys whose TTL has passed, then deletes those keys (Redis's
    /// SCAN expires what it meets). The expired ones (marked by the collector) are moved to the end
    /// of the list first so the reply can be written before any entry is freed.
    /// </summary>
    private static void ReplyAndExpire(ref CommandContext c, ref ScanCollector collector, ulong next)
    {
        nint[] items = collector.Items;
        int live = collector.Count;
        for (int i = 0; i < live;)
        {
            if (ScanCollector.IsExpiredItem(items[i]))
            {
                live--;
                (items[i], items[live]) = (items[live], items[i]);
            }
            else
            {
                i++;
            }
        }

        var reply = c.Reply;
        reply.ArrayHeader(2);
        Span<byte> digits = stackalloc byte[24];
        Utf8Formatter.TryFormat(next, digits, out int length);
        reply.Bulk(digits[..length]);
        reply.ArrayHeader(live);
        for (int i = 0; i < live; i++)
            reply.Bulk(Entry.KeyOf(ScanCollector.EntryOf(items[i])));

        var keyspace = c.Keyspace;
        for (int i = live; i < collector.Count; i++)
        {
            ReadOnlySpan<byte> key = Entry.KeyOf(ScanCollector.EntryOf(items[i]));
            uint hash = Keyspace.Hash(key);
            keyspace.ShardOf(hash).Databases[c.Client.DatabaseIndex].LookupSlot(key, hash, c.ExpireClockMs);
        }
    }

    /// <summary>Collects the entries of the buckets a scan step visits that pass MATCH and TYPE.</summary>
    private struct ScanCollector(nint[] items, Database first, long nowMs) : IEntryVisitor
    {
        public nint[] Items = items;
        public int Count;
        /// <summary>The database being scanned, which holds the keys' TTLs.</summary>
        public Database Database = first;
        private readonly long _nowMs = nowMs;
        /// <summary>Entries looked at, matching or not: what COUNT bounds, as in Redis 7.2.</summary>
        public long Sampled;
        private byte* _pattern;
        private int _patternLength;
        private bool _all;
        private bool _typeFilter;
        private bool _unknownType;
        private Engine.ValueType _type;

        public void SetFilter(byte* pattern, int patternLength, bool typeFilter, bool unknownType, Engine.ValueType type)
        {
            _pattern = pattern;
            _patternLength = patternLength;
            _all = GlobPattern.MatchesAll(new ReadOnlySpan<byte>(pattern, patternLength));
            _typeFilter = typeFilter;
            _unknownType = unknownType;
            _type = type;
        }

        public void Visit(Entry* entry)
        {
            Sampled++;
            if (_typeFilter && (_unknownType || entry->Type != _type))
                return;
            if (!_all && !GlobPattern.IsMatch(new ReadOnlySpan<byte>(_pattern, _patternLength), Entry.KeyOf(entry)))
                return;
            if (Count == Items.Length)
            {
                nint[] larger = ArrayPool<nint>.Shared.Rent(Items.Length * 2);
                Items.AsSpan().CopyTo(larger);
                ArrayPool<nint>.Shared.Return(Items);
                Items = larger;
            }
            // The TTL is checked here, where the entry's database is known: blocks are 8-byte
            // aligned, so the low bit is free to mark an expired one.
            Items[Count++] = (nint)entry | (Database.IsExpired(entry, _nowMs) ? ExpiredMark : 0);
        }

        private const nint ExpiredMark = 1;

        public static bool IsExpiredItem(nint item) => (item & ExpiredMark) != 0;

        public static Entry* EntryOf(nint item) => (Entry*)(item & ~ExpiredMark);
    }

    /// <summary>The COUNT of SCAN, HSCAN, SSCAN and ZSCAN: an integer of at least 1, else a syntax error as in Redis.</summary>
    internal static bool TryCount(ref CommandContext c, int index, out long count)
    {
        if (!c.TryInt64(index, out count))
            return false;
        if (count >= 1)
            return true;
        c.SyntaxError();
        return false;
    }

    /// <summary>Parses a cursor as Redis's strtoul does: decimal, optional sign (a negative one wraps), empty means 0.</summary>
    internal static bool TryParseCursor(ReadOnlySpan<byte> text, out ulong cursor)
    {
        cursor = 0;
        if (text.IsEmpty)
            return true;
        bool negative = text[0] == (byte)'-';
        if (text[0] is (byte)'-' or (byte)'+')
            text = text[1..];
        if (text.IsEmpty)
            return false;
        foreach (byte b in text)
        {
            uint digit = (uint)(b - '0');
            if (digit > 9 || cursor > (ulong.MaxValue - digit) / 10)
                return false;
            cursor = cursor * 10 + digit;
        }
        if (negative)
            cursor = unchecked(0 - cursor);
        return true;
    }

    /// <summary>
    /// A random live key: a shard is picked in proportion to its share of the database, then a
    /// random entry in it. An expired pick is deleted on the spot and the draw repeats, as in Redis.
    /// </summary>
    private static void RandomKey(ref CommandContext c)
    {
        var shards = c.Keyspace.Shards;
        int dbIndex = c.Client.DatabaseIndex;
        Random random = shards[0].Random;
        while (true)
        {
            long total = 0;
            foreach (var s in shards)
                total += s.Databases[dbIndex].Count;
            if (total == 0)
            {
                c.Reply.Null();
                return;
            }
            long pick = random.NextInt64(total);
            Shard shard = shards[0];
            foreach (var s in shards)
            {
                long n = s.Databases[dbIndex].Count;
                if (pick < n)
                {
                    shard = s;
                    break;
                }
                pick -= n;
            }
            Database db = shard.Databases[dbIndex];
            Entry* e = db.Keys.RandomEntry(shard.Random);
            if (db.IsExpired(e, c.NowMs))
            {
                db.LookupSlot(Entry.KeyOf(e), Keyspace.Hash(Entry.KeyOf(e)), c.ExpireClockMs);
                continue;
            }
            c.Reply.Bulk(Entry.KeyOf(e));
            return;
        }
    }
}
