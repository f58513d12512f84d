using System.Text;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.DataTypes.Streams;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Memory;
using ValueType = Diagnostics.Server.Engine.ValueType;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// Builds one key's collection or stream, detached from any database, from what
/// <see cref="RdbReader"/> reports, and checks that a stream's parts agree (its length, last ID,
/// pending entries and their owners), since the stream code relies on it. The RDB load puts each
/// value it builds in the keyspace; RESTORE adds its one. Strict (RESTORE's hostile payloads): a
/// member or field given twice, or a collection with no element, is corrupt data, as Redis refuses
/// it; otherwise (loading a file) the later one wins and an empty collection is dropped.
/// Inconsistencies throw the exception <paramref name="corrupt"/> makes of the problem. A value
/// ends in the form Redis 7.0's rdbLoadObject gives it under <paramref name="config"/>'s limits
/// (sets: Redis 7.2's, which has set listpacks).
/// </summary>
internal sealed unsafe class RdbEntryBuilder(bool strict, Func<string, Exception> corrupt, ServerConfig config)
{
    private const byte RdbTypeSetListpack = 20;
    /// <summary>Pairs from which a listpack hash being built gets <see cref="_hashFields"/> to find repeats, rather than a linear search.</summary>
    private const int LinearSearchPairs = 16;

    private Entry* _building;
    /// <summary>The value came as a packed blob (listpack, ziplist, intset, zipmap) rather than element by element.</summary>
    private bool _fromPacked;
    /// <summary>The RDB type of the collection being built (sets decide their first form by it).</summary>
    private byte _encoding;
    private readonly SetLimits _setLimits = SetLimits.From(config);
    private long _expireAt;
    private HashLimits _hashLimits;
    private bool _checkHashLengths;
    private FieldTable* _hashFields;
    private ConsumerGroup* _group;
    private StreamConsumer* _consumer;

    /// <summary>The TTL (absolute Unix ms, 0 for none) of the value last begun, for whoever adds the finished entry.</summary>
    public long ExpireAt => _expireAt;

    /// <summary>The RDB type the next collection was written as (told before <see cref="BeginCollection"/>).</summary>
    public void CollectionEncoding(byte rdbType) => _encoding = rdbType;

    /// <summary>
    /// Begins a collection. The reader states no count (<paramref name="sizeHint"/> 0) exactly
    /// when the file holds it as a packed blob, which decides the form it loads into as Redis decides it.
    /// </summary>
    public void BeginCollection(RdbCollection kind, ReadOnlySpan<byte> key, long expireAtUnixMs, long sizeHint)
    {
        Abandon();
        _fromPacked = sizeHint == 0;
        if (kind == RdbCollection.Set)
        {
            _expireAt = expireAtUnixMs;
            _building = Sets.NewEntry(key, SetFormFor(sizeHint));
            return;
        }
        var type = kind switch
        {
            RdbCollection.List => ValueType.List,
            RdbCollection.Set => ValueType.Set,
            RdbCollection.Hash => ValueType.Hash,
            _ => ValueType.SortedSet,
        };
        _building = Values.NewEntry(key, type);
        if (type == ValueType.List)
            Values.List(_building)->Configure(config.ListMaxListpackSize, config.ListCompressDepth);
        _expireAt = expireAtUnixMs;
        if (type == ValueType.Hash)
        {
            _hashLimits = HashLimits.Of(config);
            _checkHashLengths = true;
            // Too many fields said up front: a table from the start (rdbLoadObject).
            if (sizeHint > _hashLimits.MaxEntries)
                Hashes.ConvertToTable(_building);
        }
    }

    /// <summary>An element of a list stored element by element (RDB types 1 and 10): pushed at the tail, so nodes are cut as RPUSH cuts them.</summary>
    /// <summary>A listpack blob is kept as a listpack whatever its elements' lengths (Redis 7.0 checks only its field count).</summary>
    public void FromListpack() => _checkHashLengths = false;

    public void ListElement(ReadOnlySpan<byte> element) => Values.List(_building)->PushTail(element);

    /// <summary>A quicklist node, kept as the node it was (Redis's quicklistAppendListpack).</summary>
    public void ListNode(ReadOnlySpan<byte> listpack) => Values.List(_building)->AppendListpack(listpack);

    public void ListPlainNode(ReadOnlySpan<byte> element) => Values.List(_building)->AppendPlain(element);

    /// <summary>
    /// The form a set starts in, as rdbLoadObject chooses: a listpack set (RDB 11, Redis 7.2's
    /// type 20) as a listpack; any other as an intset unless it has more members than an intset
    /// may hold, then a hash table. Members then convert it as SADD would.
    /// </summary>
    private ValueForm SetFormFor(long members)
        => _encoding == RdbTypeSetListpack ? ValueForm.Listpack
        : members > _setLimits.IntsetCap ? ValueForm.Structure
        : ValueForm.Intset;

    /// <summary>A listpack set is kept as written, whatever its members' lengths, until it has too many.</summary>
    private SetLimits LoadLimits => _encoding == RdbTypeSetListpack ? _setLimits with { ListpackEntries = long.MaxValue, ListpackValue = long.MaxValue } : _setLimits;

    public void SetMember(ReadOnlySpan<byte> member)
    {
        if (!Sets.Add(_building, member, LoadLimits) && strict)
            throw corrupt($"set member '{Printable(member)}' of key '{KeyText}' appears twice");
    }

    /// <summary>
    /// One field of a hash, which Redis 7.0's rdbLoadObject holds as a listpack (appended in file
    /// order) until a field or value is too long for one (plain and older packed encodings only)
    /// or it has more fields than hash-max-listpack-entries; then a table.
    /// </summary>
    public void HashField(ReadOnlySpan<byte> field, ReadOnlySpan<byte> value)
    {
        Entry* e = _building;
        if (Hashes.IsListpack(e) && _checkHashLengths && (field.Length > _hashLimits.MaxValue || value.Length > _hashLimits.MaxValue))
            ConvertHashToTable();
        if (!Hashes.IsListpack(e))
        {
            if (!Values.Hash(e)->Set(field, value) && strict)
                throw corrupt($"hash field '{Printable(field)}' of key '{KeyText}' appears twice");
            return;
        }
        byte* lp = Values.Packed(e);
        int at = _hashFields == null || _hashFields->Find(field) != null ? NativeListpack.Find(lp, NativeListpack.First, field, 1) : -1;
        if (at >= 0)
        {
            if (strict)
                throw corrupt($"hash field '{Printable(field)}' of key '{KeyText}' appears twice");
            Values.Repoint(e, ValueForm.Listpack, NativeListpack.ReplaceString(lp, NativeListpack.Skip(lp, at), value));
            return;
        }
        // Appended with spare room, trimmed once complete: one move per doubling, not per field.
        lp = NativeListpack.AppendString(NativeListpack.AppendString(lp, field), value);
        Values.Repoint(e, ValueForm.Listpack, lp);
        long pairs = NativeListpack.Count(lp) / 2;
        if (pairs > _hashLimits.MaxEntries)
        {
            ConvertHashToTable();
            return;
        }
        if (_hashFields != null)
            _hashFields->Set(field, []);
        else if (pairs >= LinearSearchPairs)
            IndexHashFields(lp);
    }

    private void IndexHashFields(byte* lp)
    {
        _hashFields = FieldTable.Create();
        Span<byte> scratch = stackalloc byte[20];
        for (int at = NativeListpack.First; !NativeListpack.IsEnd(lp, at); at = NativeListpack.Skip(lp, NativeListpack.Skip(lp, at)))
            _hashFields->Set(NativeListpack.Read(lp, at, out _).AsBytes(scratch), []);
    }

    private void ConvertHashToTable()
    {
        TrimHashListpack();
        Hashes.ConvertToTable(_building);
    }

    /// <summary>Gives back the spare room of a listpack built by appending, and the repeat index.</summary>
    private void TrimHashListpack()
    {
        if (_hashFields != null)
            FieldTable.Destroy(_hashFields);
        _hashFields = null;
        if (!Hashes.IsListpack(_building))
            return;
        byte* lp = Values.Packed(_building);
        if (TrackedAllocator.UsableSize(lp) > (nuint)NativeListpack.Bytes(lp))
            Values.Repoint(_building, ValueForm.Listpack, TrackedAllocator.Realloc(lp, (nuint)NativeListpack.Bytes(lp)));
    }

    public void SortedSetMember(ReadOnlySpan<byte> member, double score)
    {
        var set = Values.SortedSet(_building);
        if (!set->TryGetScore(member, out _))
            set->Add(member, score);
        else if (strict)
            throw corrupt($"sorted set member '{Printable(member)}' of key '{KeyText}' appears twice");
        else
            set->Rescore(member, score);
    }

    /// <summary>The collection begun last, with its expiry set; null (nothing to add) when it has no element and the builder is not strict.</summary>
    public Entry* EndCollection()
    {
        if (_building->Type == ValueType.Hash)
            TrimHashListpack();
        Entry* e = _building;
        _building = null;
        if (Values.Length(e) == 0)
        {
            string key = Encoding.UTF8.GetString(Entry.KeyOf(e));
            EntryStore.Free(e);
            // Redis cannot hold an empty collection: a load skips it, RESTORE refuses it.
            if (strict)
                throw corrupt($"key '{key}' holds an empty collection");
            return null;
        }
        if (e->Type == ValueType.SortedSet)
            LoadedSortedSetForm(e);
        if (e->Type == ValueType.Set && e->Form == ValueForm.Listpack && Sets.Count(e) > _setLimits.ListpackEntries)
            Sets.ConvertToTable(e);
        _encoding = 0;
        return e;
    }

    /// <summary>
    /// rdbLoadObject's choice for a sorted set: a listpack or ziplist blob stays packed unless it
    /// has more than zset-max-listpack-entries members; one read member by member is packed when
    /// it is small enough on both limits (zsetConvertToListpackIfNeeded).
    /// </summary>
    private void LoadedSortedSetForm(Entry* e)
    {
        var limits = SortedSetLimits.From(config);
        SortedSetValue* set = Values.SortedSet(e);
        if (_fromPacked && set->Count > limits.MaxEntries)
            return;
        void* value = SortedSets.Pack(set, _fromPacked ? limits with { MaxValue = long.MaxValue } : limits, out var form);
        Values.Repoint(e, form, value);
    }

    // ---- streams ------------------------------------------------------------------------------------

    private StreamValue* Stream => Values.Stream(_building);

    public void BeginStream(ReadOnlySpan<byte> key, long expireAtUnixMs)
    {
        Abandon();
        _building = Values.NewEntry(key, ValueType.Stream);
        _expireAt = expireAtUnixMs;
        _group = null;
        _consumer = null;
    }

    public void StreamNode(StreamId master, ReadOnlySpan<byte> listpack)
        => Stream->AddLoadedNode(master, NativeListpack.CopyOf(listpack));

    public void StreamCounters(long length, StreamId lastId, StreamId firstId, StreamId maxDeletedId, long entriesAdded)
    {
        StreamValue* stream = Stream;
        long live = 0;
        for (int i = 0; i < stream->NodeCount; i++)
            live += stream->Node(i)->Live();
        if (length != live)
            throw corrupt($"The RDB says stream '{KeyText}' has {length} entries, its nodes hold {live}");
        stream->Length = length;
        // Appends rely on the last ID being past every entry.
        if (length > 0 && StreamValue.LastEntry(stream).Id > lastId)
            throw corrupt($"The RDB gives stream '{KeyText}' last ID {lastId}, below its last entry {StreamValue.LastEntry(stream).Id}");
        stream->LastId = lastId;
        if (entriesAdded < 0)
        {
            // Before RDB 10 these were not kept: Redis derives them the same way.
            var first = new StreamIterator(stream, StreamId.Min, StreamId.Max);
            stream->FirstId = first.Next(out StreamEntry entry) ? entry.Id : default;
            stream->MaxDeletedId = default;
            stream->EntriesAdded = length;
        }
        else
        {
            stream->FirstId = firstId;
            stream->MaxDeletedId = maxDeletedId;
            stream->EntriesAdded = entriesAdded;
        }
    }

    public void StreamGroup(ReadOnlySpan<byte> name, StreamId lastDelivered, long entriesRead)
    {
        ConsumerGroups* groups = Stream->GroupsOrCreate();
        if (groups->Find(name) != null)
            throw corrupt($"The RDB names consumer group '{Printable(name)}' of stream '{KeyText}' twice");
        if (entriesRead == long.MinValue)
            entriesRead = StreamLag.EntriesBefore(Stream, lastDelivered);
        _group = groups->Add(name, lastDelivered, entriesRead);
        _consumer = null;
    }

    public void StreamGroupPending(StreamId id, long deliveryTimeUnixMs, long deliveryCount)
    {
        if (_group->Pending->Find(id) != null)
            throw corrupt($"The RDB lists pending entry {id} twice in a group of stream '{KeyText}'");
        PendingEntry* nack = _group->Pending->Insert(id);
        nack->DeliveryTime = deliveryTimeUnixMs;
        nack->DeliveryCount = deliveryCount;
    }

    public void StreamConsumer(ReadOnlySpan<byte> name, long seenTimeUnixMs)
    {
        if (_group->FindConsumer(name) != null)
            throw corrupt($"The RDB names consumer '{Printable(name)}' twice in a group of stream '{KeyText}'");
        _consumer = _group->AddConsumer(name, seenTimeUnixMs);
    }

    public void StreamConsumerPending(StreamId id)
    {
        PendingEntry* nack = _group->Pending->Find(id);
        if (nack == null || nack->Consumer != null)
            throw corrupt($"The RDB gives consumer of stream '{KeyText}' pending entry {id}, which its group does not hold or another consumer owns");
        nack->Consumer = _consumer;
        _consumer->Pending->Insert(id);
    }

    /// <summary>The stream begun last, with its expiry set, once every pending entry is known to have its owner.</summary>
    public Entry* EndStream()
    {
        StreamValue* stream = Stream;
        if (stream->Groups != null)
            foreach (var (name, pointer) in stream->Groups->Sorted())
            {
                var group = (ConsumerGroup*)pointer;
                var cursor = group->Pending->From(StreamId.Min);
                for (PendingEntry* nack; (nack = group->Pending->At(cursor)) != null; group->Pending->MoveNext(ref cursor))
                    if (nack->Consumer == null)
                        throw corrupt($"The RDB leaves pending entry {nack->Id} of group '{Printable(name)}' of stream '{KeyText}' without a consumer");
            }
        Entry* e = _building;
        _building = null;
        return e;
    }

    /// <summary>Frees a value a failed read left half built.</summary>
    public void Abandon()
    {
        if (_hashFields != null)
            FieldTable.Destroy(_hashFields);
        _hashFields = null;
        if (_building != null)
            EntryStore.Free(_building);
        _building = null;
        _group = null;
        _consumer = null;
    }

    private string KeyText => Encoding.UTF8.GetString(Entry.KeyOf(_building));

    private static string Printable(ReadOnlySpan<byte> bytes) => Encoding.UTF8.GetString(bytes.Length > 64 ? bytes[..64] : bytes);
}
