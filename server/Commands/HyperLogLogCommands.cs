using System.Buffers;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Memory;
using Diagnostics.Server.Persistence;
using static Diagnostics.Server.Commands.CommandFlags;
using static Diagnostics.Server.DataTypes.HyperLogLog;

namespace Diagnostics.Server.Commands;

/// <summary>
/// The HyperLogLog commands (PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST) on string values in
/// Redis 7.0's own format (<see cref="HyperLogLog"/>), so a value is byte for byte what
/// redis-server 7.0.15 holds after the same commands, and either server reads the other's.
/// <para>
/// Checks in Redis's order: a key of another type is WRONGTYPE; a string that is not a
/// HyperLogLog (<see cref="HyperLogLog.IsValid"/>) gets <see cref="NotHyperLogLogError"/>; a
/// sparse form whose runs do not decode gets <see cref="InvalidObjectError"/>. PFCOUNT and PFMERGE
/// check every key in order before anything is written.
/// </para>
/// <para>
/// A sparse value is edited in place in its entry's block, which is grown ahead of each edit
/// (doubled as StringCommands.GrowString does, but never past hll-sparse-max-bytes, the most a
/// sparse value may hold before it turns dense); promotion makes a new dense entry that takes
/// the key's place (TTL kept). PFADD and single-key PFCOUNT allocate nothing on the managed heap;
/// the union registers of PFCOUNT and PFMERGE come from the array pool.
/// </para>
/// <para>
/// Propagation, as Redis: PFADD is logged as sent when a register grew or the key was created,
/// else nothing; PFMERGE always. PFCOUNT's cache write and PFDEBUG's conversion to dense are
/// propagated as the command itself without touching WATCH, events or tracking through the
/// executor (see <see cref="Propagate"/>).
/// </para>
/// </summary>
public static unsafe class HyperLogLogCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "hyperloglog";
        table.Add(new CommandSpec("pfadd", -2, Write | DenyOom | Fast, 1, 1, 1, PfAdd, g,
            "Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.", "2.8.9", "O(1) to add every element.")
        { Arguments = [new("key", "key"), new("element", "string", Optional: true, Multiple: true)] });
        // Not a write, but it may write the cached cardinality, which is propagated: CLIENT PAUSE WRITE holds it.
        table.Add(new CommandSpec("pfcount", -2, ReadOnly | MayReplicate, 1, -1, 1, PfCount, g,
            "Returns the approximated cardinality of the set(s) observed by the HyperLogLog key(s).", "2.8.9",
            "O(1) with a very small average constant time when called with a single key. O(N) with N being the number of keys, and much bigger constant times, when called with multiple keys.")
        { Arguments = [new("key", "key", Multiple: true)] });
        // Only the destination changes: WATCH, the "pfadd" event and tracking name it alone.
        table.Add(new CommandSpec("pfmerge", -2, Write | DenyOom, 1, -1, 1, PfMerge, g,
            "Merges one or more HyperLogLog values into a single key.", "2.8.9",
            "O(N) to merge N HyperLogLogs, but with high constant times.")
        { WrittenKey = 1, Arguments = [new("destkey", "key"), new("sourcekey", "key", Multiple: true)] });
        table.Add(new CommandSpec("pfdebug", 3, Write | DenyOom | Admin, 2, 2, 1, PfDebug, g,
            "Internal commands for debugging HyperLogLog values.", "2.8.9", "N/A")
        { Arguments = [new("subcommand", "string"), new("key", "key")] });
        // No keys: runs on the connection's thread, so its second of work holds no shard.
        table.Add(new CommandSpec("pfselftest", 1, Admin, 0, 0, 0, PfSelfTest, g,
            "An internal command for testing HyperLogLog values.", "2.8.9", "N/A"));
    }

    // ---- PFADD ----------------------------------------------------------------------------

    private static void PfAdd(ref CommandContext c)
    {
        ReadOnlySpan<byte> key = c.Arg(1);
        Database db = c.Database(key, out uint hash);
        Entry** slot = db.LookupSlot(key, hash, c.ExpireClockMs);   // lookupKeyWrite: no hit/miss counted
        bool updated = false;
        if (slot == null)
        {
            slot = CreateEmpty(ref c, db, key, hash);
            updated = true;
        }
        else
        {
            Entry* existing = *slot;
            if (existing->Type != Engine.ValueType.String)
            {
                c.WrongType();
                return;
            }
            c.Touch(existing);
            if (!IsValid(Entry.ValueOf(existing)))
            {
                c.Error(NotHyperLogLogError);
                return;
            }
        }

        int sparseMaxBytes = SparseMaxBytes(ref c);
        for (int i = 2; i < c.ArgCount; i++)
        {
            ElementPosition(c.Arg(i), out int index, out int count);
            Entry* e = *slot;
            if (IsDense(Entry.ValueOf(e)))
            {
                if (DenseSet(Entry.ValueOf(e), index, count))
                    updated = true;
                continue;
            }
            int length = e->ValueLength;
            e = EnsureRoom(db, slot, SparseRoom(length, sparseMaxBytes), sparseMaxBytes);
            switch (SparseSet(new Span<byte>(Entry.ValuePointer(e), Capacity(e)), ref length, index, count, sparseMaxBytes))
            {
                case SparseSetResult.Unchanged:
                    break;
                case SparseSetResult.Changed:
                    e->ValueLength = length;
                    updated = true;
                    break;
                case SparseSetResult.NeedsDense:
                    // The register grows in the dense form (Redis asserts it does).
                    if (!ConvertToDense(db, slot))
                    {
                        c.Error(InvalidObjectError);
                        return;
                    }
                    DenseSet(Entry.ValueOf(*slot), index, count);
                    updated = true;
                    break;
                default:
                    // Redis stops here: registers set before stay set, nothing is signalled or propagated.
                    c.Error(InvalidObjectError);
                    return;
            }
        }

        (*slot)->Flags |= EntryFlags.RawString;   // dbUnshareStringValue, or createHLLObject's raw string
        if (updated)
            InvalidateCache(Entry.ValueOf(*slot));
        else
            c.LogNothing();   // no event, no WATCH touch, nothing propagated, as Redis
        c.Reply.Integer(updated ? 1 : 0);
    }

    // ---- PFCOUNT --------------------------------------------------------------------------

    private static void PfCount(ref CommandContext c)
    {
        if (c.ArgCount > 2)
        {
            CountUnion(ref c);
            return;
        }
        ReadOnlySpan<byte> key = c.Arg(1);
        Entry* e = c.Read(key, out Database db);
        if (e == null)
        {
            c.Reply.Integer(0);
            return;
        }
        if (!CheckValue(ref c, e))
            return;
        e->Flags |= EntryFlags.RawString;   // Redis unshares the value to write its cache, cached or not
        if (!TryCount(Entry.ValueOf(e), out long cardinality, out bool cacheWritten))
        {
            c.Error(InvalidObjectError);
            return;
        }
        if (cacheWritten)
            SignalCacheWrite(ref c, db, key);
        c.Reply.Integer(cardinality);
    }

    /// <summary>
    /// PFCOUNT's write of the cached cardinality, which Redis treats as a change of the key: WATCH
    /// is touched, tracking clients are told, and the command is propagated.
    /// <para>
    /// Logged to the AOF as the PFCOUNT itself (what Redis propagates): the registers are the same
    /// whether or not it is replayed, but replayed it recomputes the same estimate into the same
    /// bytes, so after a restart GET returns what it returned before, as it does on redis-server.
    /// The replay itself is told to no one (its keyspace may be a rewrite's private copy).
    /// </para>
    /// </summary>
    private static void SignalCacheWrite(ref CommandContext c, Database db, ReadOnlySpan<byte> key)
    {
        if (c.Client is ReplayClient)
            return;
        db.Watched?.Touch(key);
        if (c.Server.Tracking.Any)
            c.Server.Tracking.Written(c.Client.TrackingIdentity, c.Spec, c.Args);
        Propagate(ref c);
    }

    /// <summary>The union's estimate: every key's registers merged into one (missing keys count as empty); nothing is written.</summary>
    private static void CountUnion(ref CommandContext c)
    {
        byte[] rented = ArrayPool<byte>.Shared.Rent(RegisterCount);
        try
        {
            Span<byte> registers = rented.AsSpan(0, RegisterCount);
            registers.Clear();
            for (int i = 1; i < c.ArgCount; i++)
            {
                Entry* e = c.Read(c.Arg(i), out _);
                if (e == null)
                    continue;
                if (!CheckValue(ref c, e))
                    return;
                if (!TryMergeInto(Entry.ValueOf(e), registers))
                {
                    c.Error(InvalidObjectError);
                    return;
                }
            }
            c.Reply.Integer(CountRaw(registers));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    // ---- PFMERGE --------------------------------------------------------------------------

    private static void PfMerge(ref CommandContext c)
    {
        byte[] rented = ArrayPool<byte>.Shared.Rent(RegisterCount);
        try
        {
            Span<byte> registers = rented.AsSpan(0, RegisterCount);
            registers.Clear();
            // Every key, the destination first, is read and checked before anything is written.
            bool useDense = false;
            int nonZero = 0;
            for (int i = 1; i < c.ArgCount; i++)
            {
                Entry* source = c.Read(c.Arg(i), out _);
                if (source == null)
                    continue;
                if (!CheckValue(ref c, source))
                    return;
                // A dense input makes the destination dense at once, as Redis does.
                if (IsDense(Entry.ValueOf(source)))
                    useDense = true;
                if (!TryMergeInto(Entry.ValueOf(source), registers))
                {
                    c.Error(InvalidObjectError);
                    return;
                }
            }
            foreach (byte register in registers)
                if (register != 0)
                    nonZero++;

            ReadOnlySpan<byte> key = c.Arg(1);
            Database db = c.Database(key, out uint hash);
            Entry** slot = db.LookupSlot(key, hash, c.ExpireClockMs);
            if (slot == null)
                slot = CreateEmpty(ref c, db, key, hash);
            else
                c.Touch(*slot);   // checked above with the sources
            if (useDense && !IsDense(Entry.ValueOf(*slot)) && !ConvertToDense(db, slot))
            {
                c.Error(InvalidObjectError);
                return;
            }

            if (IsDense(Entry.ValueOf(*slot)))
            {
                DenseMergeRegisters(Entry.ValueOf(*slot), registers);
            }
            else
            {
                MergeIntoSparse(db, slot, registers, nonZero, SparseMaxBytes(ref c));
            }
            InvalidateCache(Entry.ValueOf(*slot));
            (*slot)->Flags |= EntryFlags.RawString;
            c.Reply.Ok();
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <summary>
    /// Sets the merged registers into the sparse destination one by one, as Redis does (so the
    /// bytes are Redis's), promoting it midway when Redis would; then gives back the room left.
    /// </summary>
    private static void MergeIntoSparse(Database db, Entry** slot, ReadOnlySpan<byte> registers, int nonZero, int sparseMaxBytes)
    {
        int length = (*slot)->ValueLength;
        // Each register set adds at most MaxSparseGrowth bytes, and never past hll-sparse-max-bytes.
        long room = Math.Max(length, Math.Min(sparseMaxBytes, length + (long)MaxSparseGrowth * nonZero));
        Entry* e = EnsureRoom(db, slot, room, sparseMaxBytes);
        byte[] scratch = ArrayPool<byte>.Shared.Rent(DenseLength);
        try
        {
            Span<byte> dense = scratch.AsSpan(0, DenseLength);
            if (SparseMergeRegisters(new Span<byte>(Entry.ValuePointer(e), Capacity(e)), ref length, registers, sparseMaxBytes, dense))
            {
                Entry* fresh = EntryStore.Allocate(Entry.KeyOf(e), DenseLength, Engine.ValueType.String);
                dense.CopyTo(Entry.ValueOf(fresh));
                db.ReplaceEntry(slot, fresh);
                return;
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(scratch);
        }
        // Keeps the block unless it would waste more than half of it.
        e->ValueLength = length;
        db.ResizeString(slot, length);
    }

    // ---- PFDEBUG --------------------------------------------------------------------------

    private static void PfDebug(ref CommandContext c)
    {
        // Nothing here signals the key modified (Redis's pfdebugCommand does not): WATCH,
        // keyspace events and tracking are left alone; a conversion is propagated by hand.
        c.LogNothing();
        ReadOnlySpan<byte> key = c.Arg(2);
        Database db = c.Database(key, out uint hash);
        Entry** slot = db.LookupSlot(key, hash, c.ExpireClockMs);
        if (slot == null)
        {
            c.Error(NoSuchKeyError);
            return;
        }
        c.Touch(*slot);
        if (!CheckValue(ref c, *slot))
            return;

        if (c.ArgIs(1, "getreg"u8))
        {
            if (!IsDense(Entry.ValueOf(*slot)))
            {
                if (!ConvertToDense(db, slot))
                {
                    c.Error(InvalidObjectError);
                    return;
                }
                Propagate(ref c);
            }
            ReadOnlySpan<byte> dense = Entry.ValueOf(*slot);
            c.Reply.ArrayHeader(RegisterCount);
            for (int i = 0; i < RegisterCount; i++)
                c.Reply.Integer(DenseGet(dense, i));
        }
        else if (c.ArgIs(1, "decode"u8))
        {
            Decode(ref c, Entry.ValueOf(*slot));
        }
        else if (c.ArgIs(1, "encoding"u8))
        {
            c.Reply.SimpleString(EncodingName(Entry.ValueOf(*slot)));
        }
        else if (c.ArgIs(1, "todense"u8))
        {
            bool converted = false;
            if (!IsDense(Entry.ValueOf(*slot)))
            {
                if (!ConvertToDense(db, slot))
                {
                    c.Error(InvalidObjectError);
                    return;
                }
                converted = true;
                Propagate(ref c);
            }
            c.Reply.Integer(converted ? 1 : 0);
        }
        else
        {
            c.Error(string.Format(System.Globalization.CultureInfo.InvariantCulture, UnknownDebugSubcommandError, c.ArgString(1)));
        }
    }

    /// <summary>PFDEBUG DECODE: the sparse opcodes as text ("Z:8436 v:1,1 ..."), whatever they say.</summary>
    private static void Decode(ref CommandContext c, ReadOnlySpan<byte> hll)
    {
        if (IsDense(hll))
        {
            c.Error(NotSparseError);
            return;
        }
        long length = SparseDecodeLength(hll);
        // A hostile sparse value of hundreds of megabytes decodes to more than a bulk reply can
        // carry here (Redis would build it all); no HyperLogLog of Redis's comes near.
        if (length > Array.MaxLength)
        {
            c.Error("ERR HLL value too long to decode");
            return;
        }
        byte[] text = ArrayPool<byte>.Shared.Rent((int)length);
        try
        {
            int written = WriteSparseDecode(hll, text);
            c.Reply.Bulk(text.AsSpan(0, written));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(text);
        }
    }

    // ---- PFSELFTEST -----------------------------------------------------------------------

    /// <summary>Redis's self test of register access and of the estimate (about a second of work; allocates).</summary>
    private static void PfSelfTest(ref CommandContext c)
    {
        if (SelfTest(out string? error, SparseMaxBytes(ref c)))
            c.Reply.Ok();
        else
            c.Error(error!);
    }

    // ---- shared ---------------------------------------------------------------------------

    /// <summary>
    /// Redis's isHLLObjectOrReply: WRONGTYPE for another type, <see cref="NotHyperLogLogError"/>
    /// for a string that is not a HyperLogLog; false after replying.
    /// </summary>
    private static bool CheckValue(ref CommandContext c, Entry* e)
    {
        if (e->Type != Engine.ValueType.String)
        {
            c.WrongType();
            return false;
        }
        if (!IsValid(Entry.ValueOf(e)))
        {
            c.Error(NotHyperLogLogError);
            return false;
        }
        return true;
    }

    /// <summary>hll-sparse-max-bytes as the core takes it (a sparse value never comes near int's range).</summary>
    private static int SparseMaxBytes(ref CommandContext c) => (int)Math.Min(c.Server.Config.HllSparseMaxBytes, int.MaxValue);

    /// <summary>The room one <see cref="SparseSet"/> on a value of <paramref name="length"/> bytes may need.</summary>
    private static long SparseRoom(int length, int sparseMaxBytes)
        => Math.Max(length, Math.Min(length + (long)MaxSparseGrowth, sparseMaxBytes));

    /// <summary>Value bytes the entry's block can hold (its value may use fewer).</summary>
    private static int Capacity(Entry* e)
        => (int)Math.Min((long)TrackedAllocator.UsableSize((byte*)e) - Entry.HeaderSize - e->KeyLength, int.MaxValue);

    /// <summary>
    /// Makes the block of the string at <paramref name="slot"/> hold at least <paramref name="room"/>
    /// value bytes, its length and bytes unchanged. A move gives room to spare, doubling as
    /// StringCommands.GrowString does, but not past hll-sparse-max-bytes: a sparse value grows no
    /// further, so the spare would never be used. Returns the entry (moved or not).
    /// </summary>
    private static Entry* EnsureRoom(Database db, Entry** slot, long room, int sparseMaxBytes)
    {
        Entry* e = *slot;
        if (Capacity(e) >= room)
            return e;
        int length = e->ValueLength;
        long largest = TrackedAllocator.MaxBlockBytes - Entry.HeaderSize - e->KeyLength;
        // Past the largest block the allocation throws BlockTooLargeException: an error reply.
        long capacity = Math.Max(room, Math.Min(Math.Min(2 * room, sparseMaxBytes), largest));
        if (capacity > int.MaxValue)
            throw new BlockTooLargeException(Entry.BlockSize(e->KeyLength, 0) + capacity);
        e = db.ResizeString(slot, (int)capacity);
        e->ValueLength = length;
        return e;
    }

    /// <summary>A new, empty HyperLogLog at <paramref name="key"/> (Redis's createHLLObject), with room for one edit; returns its slot.</summary>
    private static Entry** CreateEmpty(ref CommandContext c, Database db, ReadOnlySpan<byte> key, uint hash)
    {
        Entry* e = EntryStore.Allocate(key, EmptySparseLength + MaxSparseGrowth, Engine.ValueType.String);
        e->ValueLength = EmptySparseLength;
        WriteEmptySparse(Entry.ValueOf(e));
        db.Add(e, hash);
        return db.LookupSlot(key, hash, c.ExpireClockMs);
    }

    /// <summary>
    /// Replaces the sparse value at <paramref name="slot"/> with its dense form, in a new entry
    /// that takes the key's place (TTL kept). False when the sparse form does not decode: nothing
    /// changed.
    /// </summary>
    private static bool ConvertToDense(Database db, Entry** slot)
    {
        Entry* e = *slot;
        Entry* dense = EntryStore.Allocate(Entry.KeyOf(e), DenseLength, Engine.ValueType.String);
        if (!TryToDense(Entry.ValueOf(e), Entry.ValueOf(dense)))
        {
            EntryStore.Free(dense);
            return false;
        }
        db.ReplaceEntry(slot, dense);
        return true;
    }

    /// <summary>
    /// Propagates the command as it was sent, straight into this command's propagation (the AOF
    /// when on; nothing while replaying), for the changes Redis propagates without signalling the
    /// key modified through the executor's path: PFCOUNT's cache write (a read command, which the
    /// executor never logs) and PFDEBUG's conversion to dense (which Redis does not signal).
    /// </summary>
    private static void Propagate(ref CommandContext c)
    {
        if (c.Effects.Propagation is not { } log)
            return;
        log.BeginCommand(c.Client.DatabaseIndex, c.ArgCount);
        for (int i = 0; i < c.ArgCount; i++)
            log.Argument(c.Arg(i));
        log.EndCommand();
    }
}
