using System.Buffers.Text;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.DataTypes;

/// <summary>
/// hash-max-listpack-entries and hash-max-listpack-value, read once by whoever writes a hash (a
/// command, a load), so one operation sees one pair of limits.
/// </summary>
public readonly record struct HashLimits(long MaxEntries, long MaxValue)
{
    /// <summary>Redis's defaults: 128 fields, 64 bytes.</summary>
    public static HashLimits Default => new(128, 64);

    public static HashLimits Of(ServerConfig config) => new(config.HashMaxListpackEntries, config.HashMaxListpackValue);
}

/// <summary>
/// A hash's operations whatever its form, as Redis's t_hash.c keeps them: a small hash is one
/// listpack of field, value, field, value... in insertion order (an updated field keeps its place,
/// a new one is appended, a deleted pair closes up); it becomes a <see cref="FieldTable"/> exactly
/// when Redis converts (before a write whose field or value is longer than hash-max-listpack-value,
/// after one that takes it past hash-max-listpack-entries) and never converts back. Commands call
/// these and never branch on <see cref="Entry.Form"/> themselves.
/// </summary>
public static unsafe class Hashes
{
    /// <summary>Redis's LISTPACK_MAX_SAFETY_SIZE: a listpack that would pass 1 GB becomes a table first (lpSafeToAdd).</summary>
    private const long ListpackSafetyBytes = 1L << 30;

    /// <summary>The block of a new hash: an empty listpack, as createHashObject makes it.</summary>
    public static byte* NewListpack() => NativeListpack.Create(NativeListpack.HeaderSize + 1);

    public static bool IsListpack(Entry* e) => e->Form == ValueForm.Listpack;

    public static long Count(Entry* e) => IsListpack(e) ? NativeListpack.Count(Values.Packed(e)) / 2 : Values.Hash(e)->Count;

    // ---- reads ----------------------------------------------------------------------------------

    /// <summary>
    /// The value of <paramref name="field"/>: its bytes, or (a listpack integer) its text formatted
    /// into <paramref name="scratch"/>, which needs 20 bytes. False when the hash lacks the field.
    /// </summary>
    public static bool TryGet(Entry* e, ReadOnlySpan<byte> field, Span<byte> scratch, out ReadOnlySpan<byte> value)
    {
        if (IsListpack(e))
        {
            byte* lp = Values.Packed(e);
            int at = NativeListpack.Find(lp, NativeListpack.First, field, 1);
            if (at < 0)
            {
                value = default;
                return false;
            }
            value = NativeListpack.Read(lp, NativeListpack.Skip(lp, at), out _).AsBytes(scratch);
            return true;
        }
        FieldNode* node = Values.Hash(e)->Find(field);
        value = node == null ? default : FieldNode.ValueOf(node);
        return node != null;
    }

    public static bool Exists(Entry* e, ReadOnlySpan<byte> field)
        => IsListpack(e) ? NativeListpack.Find(Values.Packed(e), NativeListpack.First, field, 1) >= 0 : Values.Hash(e)->Find(field) != null;

    /// <summary>The length of the field's value as text (HSTRLEN), or -1 when the field is missing.</summary>
    public static long ValueLength(Entry* e, ReadOnlySpan<byte> field)
    {
        if (IsListpack(e))
        {
            byte* lp = Values.Packed(e);
            int at = NativeListpack.Find(lp, NativeListpack.First, field, 1);
            return at < 0 ? -1 : NativeListpack.Read(lp, NativeListpack.Skip(lp, at), out _).TextLength;
        }
        FieldNode* node = Values.Hash(e)->Find(field);
        return node == null ? -1 : node->ValueLength;
    }

    /// <summary>Every field and value, in insertion order for a listpack, table order otherwise; the hash must not change meanwhile.</summary>
    public static HashPairs Pairs(Entry* e) => IsListpack(e) ? new HashPairs(Values.Packed(e)) : new HashPairs(Values.Hash(e));

    // ---- writes ---------------------------------------------------------------------------------

    /// <summary>
    /// Redis's hashTypeTryConversion, called before a write with the longest field or value it
    /// will write and their total: a listpack becomes a table when one is longer than
    /// hash-max-listpack-value or the block would pass 1 GB.
    /// </summary>
    public static void PrepareWrite(Entry* e, long longest, long total, in HashLimits limits)
    {
        if (IsListpack(e) && (longest > limits.MaxValue || NativeListpack.Bytes(Values.Packed(e)) + total > ListpackSafetyBytes))
            ConvertToTable(e);
    }

    /// <summary>
    /// Sets <paramref name="field"/> to <paramref name="value"/> (Redis's hashTypeSet): a listpack
    /// becomes a table first when either is too long for it, and after when the new field takes it
    /// past hash-max-listpack-entries. Returns true when the field was new.
    /// </summary>
    public static bool Set(Entry* e, ReadOnlySpan<byte> field, ReadOnlySpan<byte> value, in HashLimits limits)
    {
        if (IsListpack(e) && (field.Length > limits.MaxValue || value.Length > limits.MaxValue))
            ConvertToTable(e);
        if (!IsListpack(e))
            return Values.Hash(e)->Set(field, value);

        byte* lp = Values.Packed(e);
        int at = NativeListpack.Find(lp, NativeListpack.First, field, 1);
        if (at >= 0)
        {
            Values.Repoint(e, ValueForm.Listpack, NativeListpack.ReplaceString(lp, NativeListpack.Skip(lp, at), value));
            return false;
        }
        lp = NativeListpack.InsertString(lp, NativeListpack.Bytes(lp) - 1, field);
        lp = NativeListpack.InsertString(lp, NativeListpack.Bytes(lp) - 1, value);
        Values.Repoint(e, ValueForm.Listpack, lp);
        if (NativeListpack.Count(lp) / 2 > limits.MaxEntries)
            ConvertToTable(e);
        return true;
    }

    /// <summary>Removes a field; false when it was not there. A listpack closes up; a table never turns back into one.</summary>
    public static bool Delete(Entry* e, ReadOnlySpan<byte> field)
    {
        if (!IsListpack(e))
            return Values.Hash(e)->Remove(field);
        byte* lp = Values.Packed(e);
        int at = NativeListpack.Find(lp, NativeListpack.First, field, 1);
        if (at < 0)
            return false;
        Values.Repoint(e, ValueForm.Listpack, NativeListpack.Delete(lp, at, 2));
        return true;
    }

    /// <summary>Turns a listpack hash into a table with the same fields (hashTypeConvert).</summary>
    public static void ConvertToTable(Entry* e)
    {
        byte* lp = Values.Packed(e);
        FieldTable* table = FieldTable.Create();
        var pairs = new HashPairs(lp);
        while (pairs.MoveNext())
            table->Set(pairs.Field, pairs.Value);
        NativeListpack.Free(lp);
        Values.Repoint(e, ValueForm.Structure, table);
    }

    // ---- random picks (HRANDFIELD) ---------------------------------------------------------------

    /// <summary>Offset of the field of pair <paramref name="index"/> of a listpack hash.</summary>
    public static int PairAt(byte* lp, long index) => NativeListpack.Seek(lp, index * 2);
}

/// <summary>Room for one listpack integer as text (at most 20 characters), held inline by <see cref="HashPairs"/>.</summary>
[InlineArray(20)]
public struct IntegerText
{
    private byte _first;
}

/// <summary>
/// Walks a hash's field/value pairs in either form without allocating: listpack integers are
/// formatted into inline scratch, so <see cref="Field"/> and <see cref="Value"/> are spans either
/// way, valid until the next <see cref="MoveNext"/>.
/// </summary>
public unsafe ref struct HashPairs
{
    private readonly byte* _lp;
    private int _offset;
    private FieldTable.Enumerator _table;
    private ReadOnlySpan<byte> _field;
    private ReadOnlySpan<byte> _value;
    private int _fieldDigits;  // > 0: the field is an integer whose text is in _fieldText
    private int _valueDigits;
    private IntegerText _fieldText;
    private IntegerText _valueText;

    internal HashPairs(byte* lp)
    {
        _lp = lp;
        _offset = NativeListpack.First;
    }

    internal HashPairs(FieldTable* table) => _table = table->GetEnumerator();

    /// <summary>The current field (listpack integers as their decimal text).</summary>
    [UnscopedRef]
    public ReadOnlySpan<byte> Field => _fieldDigits > 0 ? ((ReadOnlySpan<byte>)_fieldText)[.._fieldDigits] : _field;

    /// <summary>The current value (listpack integers as their decimal text).</summary>
    [UnscopedRef]
    public ReadOnlySpan<byte> Value => _valueDigits > 0 ? ((ReadOnlySpan<byte>)_valueText)[.._valueDigits] : _value;

    public bool MoveNext()
    {
        if (_lp == null)
        {
            if (!_table.MoveNext())
                return false;
            FieldNode* node = _table.Current;
            _field = FieldNode.FieldOf(node);
            _value = FieldNode.ValueOf(node);
            return true;
        }
        if (NativeListpack.IsEnd(_lp, _offset))
            return false;
        var field = NativeListpack.Read(_lp, _offset, out int valueAt);
        var value = NativeListpack.Read(_lp, valueAt, out _offset);
        _fieldDigits = field.IsInteger ? Format(field.Integer, _fieldText) : 0;
        _field = field.Span;
        _valueDigits = value.IsInteger ? Format(value.Integer, _valueText) : 0;
        _value = value.Span;
        return true;
    }

    private static int Format(long integer, Span<byte> text)
    {
        Utf8Formatter.TryFormat(integer, text, out int written);
        return written;
    }
}
