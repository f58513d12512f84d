using Diagnostics.Server.DataTypes;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Memory;
using Diagnostics.Server.Protocol;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// Bitmap commands: a string value read and written bit by bit (<see cref="Bitmap"/>), grown
/// with zeros as far as a write reaches, with Redis 7.0's argument order, limits and errors.
/// </summary>
public static unsafe class BitmapCommands
{
    private const string BitOffsetError = "ERR bit offset is not an integer or out of range";
    private const string BitValueError = "ERR bit is not an integer or out of range";
    private const string BitArgumentError = "ERR The bit argument must be 1 or 0.";
    private const string BitfieldTypeError = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";

    public static void Register(CommandTable table)
    {
        const string g = "bitmap";
        CommandArgument key = new("key", "key");
        CommandArgument range = new("range", "block", Optional: true, Children: [
            new("start", "integer"), new("end", "integer"),
            new("unit", "oneof", Optional: true, Children: [new("byte", "pure-token", Token: "BYTE"), new("bit", "pure-token", Token: "BIT")])]);
        CommandArgument getField = new("get-block", "block", Token: "GET", Children: [new("encoding", "string"), new("offset", "integer")]);

        table.Add(new CommandSpec("setbit", 4, Write | DenyOom, 1, 1, 1, SetBit, g,
            "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.", "2.2.0")
        { Arguments = [key, new("offset", "integer"), new("value", "integer")] });
        table.Add(new CommandSpec("getbit", 3, ReadOnly | Fast, 1, 1, 1, GetBit, g,
            "Returns a bit value by offset.", "2.2.0")
        { Arguments = [key, new("offset", "integer")] });
        table.Add(new CommandSpec("bitcount", -2, ReadOnly, 1, 1, 1, BitCount, g,
            "Counts the number of set bits (population counting) in a string.", "2.6.0", "O(N)")
        { Arguments = [key, range] });
        table.Add(new CommandSpec("bitpos", -3, ReadOnly, 1, 1, 1, BitPos, g,
            "Finds the first set (1) or clear (0) bit in a string.", "2.8.7", "O(N)")
        {
            Arguments = [key, new("bit", "integer"), new("range", "block", Optional: true, Children: [
                new("start", "integer"), new("end-unit-block", "block", Optional: true, Children: [
                    new("end", "integer"),
                    new("unit", "oneof", Optional: true, Children: [new("byte", "pure-token", Token: "BYTE"), new("bit", "pure-token", Token: "BIT")])])])],
        });
        table.Add(new CommandSpec("bitop", -4, Write | DenyOom, 2, -1, 1, BitOp, g,
            "Performs bitwise operations on multiple strings, and stores the result.", "2.6.0", "O(N)")
        {
            WrittenKey = 2,
            Arguments = [new("operation", "oneof", Children: [
                    new("and", "pure-token", Token: "AND"), new("or", "pure-token", Token: "OR"),
                    new("xor", "pure-token", Token: "XOR"), new("not", "pure-token", Token: "NOT")]),
                new("destkey", "key"), new("key", "key", Multiple: true)],
        });
        table.Add(new CommandSpec("bitfield", -2, Write | DenyOom, 1, 1, 1, BitField, g,
            "Performs arbitrary bitfield integer operations on strings.", "3.2.0",
            "O(1) for each subcommand specified")
        {
            Arguments = [key, new("operation", "oneof", Optional: true, Multiple: true, Children: [
                getField,
                new("write", "block", Children: [
                    new("overflow-block", "oneof", Optional: true, Token: "OVERFLOW", Children: [
                        new("wrap", "pure-token", Token: "WRAP"), new("sat", "pure-token", Token: "SAT"), new("fail", "pure-token", Token: "FAIL")]),
                    new("write-operation", "oneof", Children: [
                        new("set-block", "block", Token: "SET", Children: [new("encoding", "string"), new("offset", "integer"), new("value", "integer")]),
                        new("incrby-block", "block", Token: "INCRBY", Children: [new("encoding", "string"), new("offset", "integer"), new("increment", "integer")])])])])],
        });
        table.Add(new CommandSpec("bitfield_ro", -2, ReadOnly | Fast, 1, 1, 1, BitFieldReadOnly, g,
            "Performs arbitrary read-only bitfield integer operations on strings.", "6.0.0",
            "O(1) for each subcommand specified")
        { Arguments = [key, new("get-block", "block", Optional: true, Multiple: true, Token: "GET", Children: [new("encoding", "string"), new("offset", "integer")])] });
    }

    // ---- SETBIT / GETBIT ----------------------------------------------------------------

    private static void SetBit(ref CommandContext c)
    {
        if (!TryBitOffset(ref c, c.Arg(2), 0, out ulong offset))
            return;
        if (!NumberFormat.TryParseInt64(c.Arg(3), out long on) || (on & ~1L) != 0)
        {
            c.Error(BitValueError);
            return;
        }
        Entry* e = StringForBitWrite(ref c, offset, out bool grown);
        if (e == null)
            return;
        Span<byte> bytes = Entry.ValueOf(e);
        int old = Bitmap.GetBit(bytes, offset);
        Bitmap.SetBit(bytes, offset, (int)on);
        // A bit set to what it was changes nothing: no event, nothing logged (as Redis 7.0.15).
        if (!grown && old == on)
            c.LogNothing();
        c.Reply.Integer(old);
    }

    private static void GetBit(ref CommandContext c)
    {
        if (!TryBitOffset(ref c, c.Arg(2), 0, out ulong offset))
            return;
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.String, out bool failed);
        if (!failed)
            c.Reply.Integer(e == null ? 0 : Bitmap.GetBit(Entry.ValueOf(e), offset));
    }

    // ---- BITCOUNT / BITPOS ----------------------------------------------------------------

    private static void BitCount(ref CommandContext c)
    {
        // Redis 7.0 looks the key up first: a missing key counts 0 whatever the arguments say.
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.String, out bool failed);
        if (failed)
            return;
        if (c.ArgCount is not (2 or 4 or 5))
        {
            if (e == null) c.Reply.Integer(0); else c.SyntaxError();
            return;
        }
        if (e == null)
        {
            c.Reply.Integer(0);
            return;
        }
        ReadOnlySpan<byte> bytes = Entry.ValueOf(e);
        if (c.ArgCount == 2)
        {
            c.Reply.Integer(Bitmap.PopCount(bytes));
            return;
        }
        if (!c.TryInt64(2, out long start) || !c.TryInt64(3, out long end) || !TryUnit(ref c, 4, out bool inBits))
            return;
        if (!ClampRange(bytes.Length, inBits, ref start, ref end))
        {
            c.Reply.Integer(0);
            return;
        }
        if (!inBits)
        {
            c.Reply.Integer(Bitmap.PopCount(bytes[(int)start..(int)(end + 1)]));
            return;
        }
        long count = 0;
        for (long bit = start; bit <= end && (bit & 7) != 0; bit++, start++)
            count += Bitmap.GetBit(bytes, (ulong)bit);
        long wholeEnd = (end + 1) & ~7L;
        if (start < wholeEnd)
            count += Bitmap.PopCount(bytes[(int)(start >> 3)..(int)(wholeEnd >> 3)]);
        for (long bit = Math.Max(start, wholeEnd); bit <= end; bit++)
            count += Bitmap.GetBit(bytes, (ulong)bit);
        c.Reply.Integer(count);
    }

    private static void BitPos(ref CommandContext c)
    {
        if (!c.TryInt64(2, out long bit))
            return;
        if (bit is not (0 or 1))
        {
            c.Error(BitArgumentError);
            return;
        }
        Entry* e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.String, out bool failed);
        if (failed)
            return;
        // A missing key is an endless run of zeros.
        if (e == null)
        {
            c.Reply.Integer(bit == 1 ? -1 : 0);
            return;
        }
        ReadOnlySpan<byte> bytes = Entry.ValueOf(e);
        if (c.ArgCount > 6)
        {
            c.SyntaxError();
            return;
        }
        bool endGiven = c.ArgCount >= 5;
        long start = 0, end = -1;
        bool inBits = false;
        if (c.ArgCount >= 4 && (!c.TryInt64(3, out start) || !TryUnit(ref c, 5, out inBits) || (endGiven && !c.TryInt64(4, out end))))
            return;
        if (!ClampRange(bytes.Length, inBits, ref start, ref end))
        {
            c.Reply.Integer(-1);
            return;
        }
        if (!inBits)
        {
            ReadOnlySpan<byte> window = bytes[(int)start..(int)(end + 1)];
            long found = Bitmap.FirstBit(window, (int)bit);
            // Looking for a 0 inside an explicit range: the padding past its end does not count.
            if (found == (long)window.Length * 8 && endGiven)
                found = -1;
            c.Reply.Integer(found < 0 ? -1 : found + start * 8);
            return;
        }
        // In bits: the partial byte at each end bit by bit, the whole bytes between at once.
        long at = start;
        for (; at <= end && (at & 7) != 0; at++)
            if (Bitmap.GetBit(bytes, (ulong)at) == bit)
            {
                c.Reply.Integer(at);
                return;
            }
        long wholeEnd = (end + 1) & ~7L;
        if (at < wholeEnd)
        {
            long found = Bitmap.FirstBit(bytes[(int)(at >> 3)..(int)(wholeEnd >> 3)], (int)bit);
            if (found >= 0 && found < wholeEnd - at)
            {
                c.Reply.Integer(at + found);
                return;
            }
            at = wholeEnd;
        }
        for (; at <= end; at++)
            if (Bitmap.GetBit(bytes, (ulong)at) == bit)
            {
                c.Reply.Integer(at);
                return;
            }
        // BIT needs an explicit end, so no padding counts: nothing found.
        c.Reply.Integer(-1);
    }

    /// <summary>BYTE or BIT at <paramref name="index"/> when given; a syntax error otherwise.</summary>
    private static bool TryUnit(ref CommandContext c, int index, out bool inBits)
    {
        inBits = false;
        if (index >= c.ArgCount || c.ArgIs(index, "byte"u8))
            return true;
        if (c.ArgIs(index, "bit"u8))
        {
            inBits = true;
            return true;
        }
        c.SyntaxError();
        return false;
    }

    /// <summary>
    /// Redis's range rules: both ends negative and reversed is empty; negatives count from the end
    /// (in bytes, or bits with BIT), then both are clamped into the value. False when nothing is left.
    /// </summary>
    private static bool ClampRange(int byteLength, bool inBits, ref long start, ref long end)
    {
        if (start < 0 && end < 0 && start > end)
            return false;
        long total = inBits ? (long)byteLength * 8 : byteLength;
        if (start < 0) start += total;
        if (end < 0) end += total;
        if (start < 0) start = 0;
        if (end < 0) end = 0;
        if (end >= total) end = total - 1;
        return start <= end;
    }

    // ---- BITOP ----------------------------------------------------------------------------

    private static void BitOp(ref CommandContext c)
    {
        BitOperation operation;
        if (c.ArgIs(1, "and"u8)) operation = BitOperation.And;
        else if (c.ArgIs(1, "or"u8)) operation = BitOperation.Or;
        else if (c.ArgIs(1, "xor"u8)) operation = BitOperation.Xor;
        else if (c.ArgIs(1, "not"u8)) operation = BitOperation.Not;
        else
        {
            c.SyntaxError();
            return;
        }
        if (operation == BitOperation.Not && c.ArgCount != 4)
        {
            c.Error("ERR BITOP NOT must be called with a single source key.");
            return;
        }
        // First pass: types checked and the result's length found before anything is built.
        long length = 0;
        for (int i = 3; i < c.ArgCount; i++)
        {
            Entry* source = TypedKeys.Read(ref c, c.Arg(i), Engine.ValueType.String, out bool failed);
            if (failed)
                return;
            if (source != null)
                length = Math.Max(length, source->ValueLength);
        }
        ReadOnlySpan<byte> destination = c.Arg(2);
        Database db = c.Database(destination, out uint hash);
        if (length == 0)
        {
            if (db.Delete(destination, hash, c.ExpireClockMs))
                TypedKeys.Notify(ref c, KeyspaceEventTypes.Generic, "del"u8, destination);
            else
                c.LogNothing();
            c.Reply.Integer(0);
            return;
        }
        // Built in the new entry itself, then swapped in: a source may be the destination.
        Entry* result = EntryStore.Allocate(destination, (int)length, Engine.ValueType.String);
        result->Flags |= EntryFlags.RawString;
        Span<byte> bytes = Entry.ValueOf(result);
        for (int i = 3; i < c.ArgCount; i++)
        {
            Entry* source = c.Database(c.Arg(i), out uint sourceHash).Lookup(c.Arg(i), sourceHash, c.ExpireClockMs);
            ReadOnlySpan<byte> sourceBytes = source == null ? default : Entry.ValueOf(source);
            if (i == 3)
                Bitmap.Begin(operation, sourceBytes, bytes);
            else
                Bitmap.Fold(operation, sourceBytes, bytes);
        }
        db.Delete(destination, hash, c.ExpireClockMs);
        db.Add(result, hash);
        TypedKeys.Notify(ref c, KeyspaceEventTypes.String, "set"u8, destination);
        c.Reply.Integer(length);
    }

    // ---- BITFIELD -------------------------------------------------------------------------

    private enum FieldOp : byte { Get, Set, IncrBy, Overflow }

    /// <summary>One parsed BITFIELD operation; the value of SET, the increment of INCRBY.</summary>
    private struct FieldOperation
    {
        public FieldOp Op;
        public bool Signed;
        public int Bits;
        public ulong Offset;
        public long Value;
        public BitfieldOverflow Overflow;
    }

    private static void BitField(ref CommandContext c) => BitField(ref c, readOnly: false);

    private static void BitFieldReadOnly(ref CommandContext c) => BitField(ref c, readOnly: true);

    /// <summary>
    /// Every operation is parsed before any runs (an error anywhere runs none); the string is then
    /// grown once to the farthest bit written, and the operations run in order. The parse is done
    /// twice, validating then executing, so nothing is stored per operation.
    /// </summary>
    private static void BitField(ref CommandContext c, bool readOnly)
    {
        int operations = 0;
        bool writes = false;
        ulong farthest = 0;
        var overflow = BitfieldOverflow.Wrap;
        for (int i = 2; i < c.ArgCount;)
        {
            if (!TryParseField(ref c, ref i, ref overflow, out FieldOperation op))
                return;
            if (op.Op == FieldOp.Overflow)
                continue;
            operations++;
            if (op.Op != FieldOp.Get)
            {
                writes = true;
                farthest = Math.Max(farthest, op.Offset + (ulong)op.Bits - 1);
            }
        }
        Entry* e;
        if (!writes)
        {
            e = TypedKeys.Read(ref c, c.Arg(1), Engine.ValueType.String, out bool failed);
            if (failed)
                return;
        }
        else if (readOnly)
        {
            c.Error("ERR BITFIELD_RO only supports the GET subcommand");
            return;
        }
        else
        {
            e = StringForBitWrite(ref c, farthest, out bool grown);
            if (e == null)
                return;
            writes = grown;
        }
        c.Reply.ArrayHeader(operations);
        int changes = writes ? 1 : 0;
        overflow = BitfieldOverflow.Wrap;
        for (int i = 2; i < c.ArgCount;)
        {
            TryParseField(ref c, ref i, ref overflow, out FieldOperation op);
            if (op.Op == FieldOp.Overflow)
                continue;
            ReadOnlySpan<byte> current = e == null ? default : Entry.ValueOf(e);
            if (op.Op == FieldOp.Get)
            {
                if (op.Signed)
                    c.Reply.Integer(Bitmap.GetSigned(current, op.Offset, op.Bits));
                else
                    c.Reply.Integer((long)Bitmap.GetUnsigned(current, op.Offset, op.Bits));
                continue;
            }
            if (RunFieldWrite(ref c, Entry.ValueOf(e), op))
                changes++;
        }
        if (changes == 0)
        {
            c.LogNothing();
            return;
        }
        TypedKeys.Notify(ref c, KeyspaceEventTypes.String, "setbit"u8, c.Arg(1));
    }

    /// <summary>Runs SET or INCRBY and replies; true when the field's value changed.</summary>
    private static bool RunFieldWrite(ref CommandContext c, Span<byte> bytes, in FieldOperation op)
    {
        bool increment = op.Op == FieldOp.IncrBy;
        ulong oldBits, newBits;
        long reply;
        int overflowed;
        if (op.Signed)
        {
            long old = Bitmap.GetSigned(bytes, op.Offset, op.Bits);
            overflowed = increment
                ? Bitmap.AddSigned(old, op.Value, op.Bits, op.Overflow, out long updated)
                : Bitmap.AddSigned(op.Value, 0, op.Bits, op.Overflow, out updated);
            reply = increment ? updated : old;
            oldBits = (ulong)old;
            newBits = (ulong)updated;
        }
        else
        {
            ulong old = Bitmap.GetUnsigned(bytes, op.Offset, op.Bits);
            overflowed = increment
                ? Bitmap.AddUnsigned(old, op.Value, op.Bits, op.Overflow, out ulong updated)
                : Bitmap.AddUnsigned((ulong)op.Value, 0, op.Bits, op.Overflow, out updated);
            reply = increment ? (long)updated : (long)old;
            oldBits = old;
            newBits = updated;
        }
        if (overflowed != 0 && op.Overflow == BitfieldOverflow.Fail)
        {
            c.Reply.Null();
            return false;
        }
        c.Reply.Integer(reply);
        Bitmap.SetInteger(bytes, op.Offset, op.Bits, newBits);
        return oldBits != newBits;
    }

    /// <summary>
    /// Parses the operation at <paramref name="i"/> and moves past it: GET type offset, SET and
    /// INCRBY type offset value, or OVERFLOW WRAP|SAT|FAIL (which changes the operations after it).
    /// Replies Redis's error and returns false on the first bad argument.
    /// </summary>
    private static bool TryParseField(ref CommandContext c, ref int i, ref BitfieldOverflow overflow, out FieldOperation op)
    {
        op = default;
        int remaining = c.ArgCount - i - 1;
        if (c.ArgIs(i, "get"u8) && remaining >= 2) op.Op = FieldOp.Get;
        else if (c.ArgIs(i, "set"u8) && remaining >= 3) op.Op = FieldOp.Set;
        else if (c.ArgIs(i, "incrby"u8) && remaining >= 3) op.Op = FieldOp.IncrBy;
        else if (c.ArgIs(i, "overflow"u8) && remaining >= 1)
        {
            op.Op = FieldOp.Overflow;
            if (c.ArgIs(i + 1, "wrap"u8)) overflow = BitfieldOverflow.Wrap;
            else if (c.ArgIs(i + 1, "sat"u8)) overflow = BitfieldOverflow.Saturate;
            else if (c.ArgIs(i + 1, "fail"u8)) overflow = BitfieldOverflow.Fail;
            else
            {
                c.Error("ERR Invalid OVERFLOW type specified");
                return false;
            }
            i += 2;
            return true;
        }
        else
        {
            c.SyntaxError();
            return false;
        }
        if (!TryFieldType(c.Arg(i + 1), out op.Signed, out op.Bits))
        {
            c.Error(BitfieldTypeError);
            return false;
        }
        if (!TryBitOffset(ref c, c.Arg(i + 2), op.Bits, out op.Offset))
            return false;
        if (op.Op != FieldOp.Get && !c.TryInt64(i + 3, out op.Value))
            return false;
        op.Overflow = overflow;
        i += op.Op == FieldOp.Get ? 3 : 4;
        return true;
    }

    /// <summary>i1..i64 or u1..u63 (an unsigned 64-bit value cannot be an integer reply).</summary>
    private static bool TryFieldType(ReadOnlySpan<byte> type, out bool signed, out int bits)
    {
        signed = type.Length > 0 && type[0] == (byte)'i';
        bits = 0;
        if (type.Length < 2 || (type[0] != (byte)'i' && type[0] != (byte)'u') || !NumberFormat.TryParseInt64(type[1..], out long n))
            return false;
        if (n < 1 || n > (signed ? 64 : 63))
            return false;
        bits = (int)n;
        return true;
    }

    // ---- shared -------------------------------------------------------------------------

    /// <summary>
    /// A bit offset: a non-negative integer, or with <paramref name="fieldBits"/> (BITFIELD) "#n"
    /// meaning n fields of that width; the byte it falls in must be under proto-max-bulk-len and
    /// fit the allocator's largest block.
    /// </summary>
    private static bool TryBitOffset(ref CommandContext c, ReadOnlySpan<byte> argument, int fieldBits, out ulong offset)
    {
        offset = 0;
        bool fields = fieldBits > 0 && argument.Length > 0 && argument[0] == (byte)'#';
        if (!NumberFormat.TryParseInt64(fields ? argument[1..] : argument, out long value)
            || (fields && (value < 0 || value > long.MaxValue / fieldBits)))
        {
            c.Error(BitOffsetError);
            return false;
        }
        if (fields)
            value *= fieldBits;
        long limit = Math.Min(c.Server.Config.Limits.ProtoMaxBulkLength,
            TrackedAllocator.MaxBlockBytes - Entry.HeaderSize - c.Arg(1).Length);
        if (value < 0 || (value >> 3) >= limit)
        {
            c.Error(BitOffsetError);
            return false;
        }
        offset = (ulong)value;
        return true;
    }

    /// <summary>
    /// The string at key 1 made long enough to hold bit <paramref name="farthestBit"/> (created, or
    /// padded with zeros); null after WRONGTYPE. <paramref name="grown"/>: it was created or lengthened.
    /// </summary>
    private static Entry* StringForBitWrite(ref CommandContext c, ulong farthestBit, out bool grown)
    {
        ReadOnlySpan<byte> key = c.Arg(1);
        int length = (int)(farthestBit >> 3) + 1;
        Entry* e = TypedKeys.Write(ref c, key, Engine.ValueType.String, out bool failed);
        grown = false;
        if (failed)
            return null;
        Database db = c.Database(key, out uint hash);
        if (e == null)
        {
            e = EntryStore.Allocate(key, length, Engine.ValueType.String);
            Entry.ValueOf(e).Clear();
            e->Flags |= EntryFlags.RawString;
            db.Add(e, hash);
            grown = true;
            return e;
        }
        int old = e->ValueLength;
        if (length > old)
        {
            e = StringCommands.GrowString(db, db.LookupSlot(key, hash, c.ExpireClockMs), length);
            Entry.ValueOf(e)[old..].Clear();
            grown = true;
        }
        e->Flags |= EntryFlags.RawString;
        return e;
    }
}
