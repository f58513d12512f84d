using System.Buffers.Text;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Memory;
using Diagnostics.Server.Protocol;
using ValueType = Diagnostics.Server.Engine.ValueType;

namespace Diagnostics.Server.DataTypes;

/// <summary>
/// The limits under which a set stays packed, read from the settings once per command (or once
/// per load): set-max-intset-entries, set-max-listpack-entries and set-max-listpack-value.
/// </summary>
public readonly record struct SetLimits(long IntsetEntries, long ListpackEntries, long ListpackValue)
{
    /// <summary>Redis 7.2's defaults: 512, 128, 64.</summary>
    public static SetLimits Default => new(512, 128, 64);

    public static SetLimits From(Configuration.ServerConfig config)
        => new(config.SetMaxIntsetEntries, config.SetMaxListpackEntries, config.SetMaxListpackValue);

    /// <summary>Intsets hold at most 2^30 members whatever the setting says (intsetMaxEntries).</summary>
    public long IntsetCap => Math.Min(IntsetEntries, 1L << 30);
}

/// <summary>
/// Every operation on a set value, whichever form holds it: an intset (<see cref="NativeIntset"/>)
/// while every member is an integer, a listpack (<see cref="NativeListpack"/>) while it is small,
/// else a <see cref="FieldTable"/>. Conversions happen exactly where Redis 7.2's t_set.c makes
/// them, and only towards the bigger form while the server runs. A packed block can move when
/// edited, so every operation takes the entry and repoints it; commands never branch on the form.
/// </summary>
public static unsafe class Sets
{
    /// <summary>Digits and sign of the longest 64-bit integer: scratch for formatting one.</summary>
    public const int IntegerTextMax = 20;

    // ---- creating -------------------------------------------------------------------------------

    /// <summary>
    /// A detached entry holding an empty set in the form that can take <paramref name="firstMember"/>
    /// when about <paramref name="sizeHint"/> members will come (setTypeCreate): an intset for an
    /// integer, else a listpack, else (too many) a hash table.
    /// </summary>
    public static Entry* NewEntry(ReadOnlySpan<byte> key, ReadOnlySpan<byte> firstMember, long sizeHint, in SetLimits limits)
    {
        ValueForm form = NumberFormat.TryParseInt64(firstMember, out _) && sizeHint <= limits.IntsetEntries ? ValueForm.Intset
            : sizeHint <= limits.ListpackEntries ? ValueForm.Listpack
            : ValueForm.Structure;
        return NewEntry(key, form);
    }

    /// <summary>A detached entry holding an empty set in <paramref name="form"/>.</summary>
    public static Entry* NewEntry(ReadOnlySpan<byte> key, ValueForm form)
    {
        void* block = form switch
        {
            ValueForm.Intset => NativeIntset.Create(),
            ValueForm.Listpack => NativeListpack.Create(NativeListpack.HeaderSize + 1),
            _ => FieldTable.Create(),
        };
        Entry* e = Values.NewEntry(key, ValueType.Set, block);
        e->Form = form;
        return e;
    }

    /// <summary>Converts to a hash table up front when <paramref name="sizeHint"/> members are about to come that the packed form cannot take (setTypeMaybeConvert).</summary>
    public static void MaybeConvert(Entry* e, long sizeHint, in SetLimits limits)
    {
        if ((e->Form == ValueForm.Listpack && sizeHint > limits.ListpackEntries)
            || (e->Form == ValueForm.Intset && sizeHint > limits.IntsetEntries))
            ConvertToTable(e);
    }

    // ---- reading --------------------------------------------------------------------------------

    public static long Count(Entry* e) => e->Form switch
    {
        ValueForm.Intset => NativeIntset.Count(Values.Packed(e)),
        ValueForm.Listpack => NativeListpack.Count(Values.Packed(e)),
        _ => Values.Set(e)->Count,
    };

    public static bool Contains(Entry* e, ReadOnlySpan<byte> member) => e->Form switch
    {
        ValueForm.Intset => NumberFormat.TryParseInt64(member, out long value) && NativeIntset.Contains(Values.Packed(e), value),
        ValueForm.Listpack => NativeListpack.Find(Values.Packed(e), NativeListpack.First, member, 0) >= 0,
        _ => Values.Set(e)->Find(member) != null,
    };

    /// <summary>Membership of a member known as an integer (an intset's, or one read as such): no text unless the set holds text.</summary>
    public static bool ContainsInteger(Entry* e, long value)
    {
        if (e->Form == ValueForm.Intset)
            return NativeIntset.Contains(Values.Packed(e), value);
        Span<byte> text = stackalloc byte[IntegerTextMax];
        return Contains(e, Format(value, text));
    }

    /// <summary>A random member (the set must not be empty); an integer is formatted into <paramref name="scratch"/> (<see cref="IntegerTextMax"/> bytes).</summary>
    public static ReadOnlySpan<byte> RandomMember(Entry* e, Random random, Span<byte> scratch)
    {
        switch (e->Form)
        {
            case ValueForm.Intset:
            {
                byte* set = Values.Packed(e);
                return Format(NativeIntset.Get(set, random.Next(NativeIntset.Count(set))), scratch);
            }
            case ValueForm.Listpack:
            {
                byte* lp = Values.Packed(e);
                int offset = NativeListpack.Seek(lp, random.Next(NativeListpack.Count(lp)));
                return NativeListpack.Read(lp, offset, out _).AsBytes(scratch);
            }
            default:
                return FieldNode.FieldOf(Values.Set(e)->Random(random));
        }
    }

    /// <summary>The members, each as the bytes Redis replies (integers formatted as they come).</summary>
    public static MemberEnumerator Members(Entry* e) => new(e);

    // ---- writing --------------------------------------------------------------------------------

    /// <summary>Adds <paramref name="member"/>, converting the set first when its form cannot take it (setTypeAdd). False when it was there.</summary>
    public static bool Add(Entry* e, ReadOnlySpan<byte> member, in SetLimits limits)
    {
        switch (e->Form)
        {
            case ValueForm.Intset:
                if (NumberFormat.TryParseInt64(member, out long value))
                    return AddToIntset(e, value, limits);
                // The first member that is not an integer: a listpack if every member would fit
                // one (judged by the widest integer's digits), else a hash table.
                byte* set = Values.Packed(e);
                int count = NativeIntset.Count(set);
                int widest = count == 0 ? 0 : Math.Max(NumberFormat.DigitCount(NativeIntset.Min(set)), NumberFormat.DigitCount(NativeIntset.Max(set)));
                if (count < limits.ListpackEntries && member.Length <= limits.ListpackValue && widest <= limits.ListpackValue)
                {
                    ConvertToListpack(e, NativeListpack.StringSize(member));
                    Append(e, member);
                }
                else
                {
                    ConvertToTable(e);
                    AddToTable(Values.Set(e), member);
                }
                return true;
            case ValueForm.Listpack:
            {
                byte* lp = Values.Packed(e);
                if (NativeListpack.Find(lp, NativeListpack.First, member, 0) >= 0)
                    return false;
                if (NativeListpack.Count(lp) < limits.ListpackEntries && member.Length <= limits.ListpackValue)
                    Append(e, member);
                else
                {
                    ConvertToTable(e);
                    AddToTable(Values.Set(e), member);
                }
                return true;
            }
            default:
                return AddToTable(Values.Set(e), member);
        }
    }

    /// <summary>Adds a member known as an integer (setTypeAddAux with an integer): straight into an intset, else as its text.</summary>
    public static bool AddInteger(Entry* e, long value, in SetLimits limits)
    {
        if (e->Form == ValueForm.Intset)
            return AddToIntset(e, value, limits);
        Span<byte> text = stackalloc byte[IntegerTextMax];
        return Add(e, Format(value, text), limits);
    }

    /// <summary>Removes <paramref name="member"/>; false when it was not there. Packed forms stay packed, as in Redis.</summary>
    public static bool Remove(Entry* e, ReadOnlySpan<byte> member)
    {
        switch (e->Form)
        {
            case ValueForm.Intset:
            {
                if (!NumberFormat.TryParseInt64(member, out long value))
                    return false;
                byte* set = NativeIntset.Remove(Values.Packed(e), value, out bool removed);
                Values.Repoint(e, ValueForm.Intset, set);
                return removed;
            }
            case ValueForm.Listpack:
            {
                byte* lp = Values.Packed(e);
                int offset = NativeListpack.Find(lp, NativeListpack.First, member, 0);
                if (offset < 0)
                    return false;
                Values.Repoint(e, ValueForm.Listpack, NativeListpack.Delete(lp, offset, 1));
                return true;
            }
            default:
                return Values.Set(e)->Remove(member);
        }
    }

    /// <summary>
    /// Makes a set whose members are all integers an intset, unless it has too many for one
    /// (maybeConvertToIntset: SINTERSTORE's result).
    /// </summary>
    public static void MaybeConvertToIntset(Entry* e, in SetLimits limits)
    {
        if (e->Form == ValueForm.Intset || Count(e) > limits.IntsetCap)
            return;
        byte* set = NativeIntset.Create();
        foreach (ReadOnlySpan<byte> member in Members(e))
        {
            NumberFormat.TryParseInt64(member, out long value);
            set = NativeIntset.Add(set, value, out _);
        }
        Values.FreeStructure(e);
        Values.Repoint(e, ValueForm.Intset, set);
    }

    /// <summary>Moves the members into a hash table (setTypeConvert to OBJ_ENCODING_HT).</summary>
    public static void ConvertToTable(Entry* e)
    {
        if (e->Form == ValueForm.Structure)
            return;
        FieldTable* table = FieldTable.Create();
        foreach (ReadOnlySpan<byte> member in Members(e))
            table->Add(member, FieldTable.HashOf(member), 0);
        TrackedAllocator.Free(Values.Packed(e));
        Values.Repoint(e, ValueForm.Structure, table);
    }

    private static bool AddToTable(FieldTable* table, ReadOnlySpan<byte> member)
    {
        uint hash = FieldTable.HashOf(member);
        if (table->Find(member, hash) != null)
            return false;
        table->Add(member, hash, 0);
        return true;
    }

    private static bool AddToIntset(Entry* e, long value, in SetLimits limits)
    {
        byte* set = NativeIntset.Add(Values.Packed(e), value, out bool added);
        Values.Repoint(e, ValueForm.Intset, set);
        if (added && NativeIntset.Count(set) > limits.IntsetCap)
            ConvertToTable(e);
        return added;
    }

    /// <summary>An intset's members as a listpack sized for them and <paramref name="room"/> more bytes, so the append that follows does not move it.</summary>
    private static void ConvertToListpack(Entry* e, int room)
    {
        byte* set = Values.Packed(e);
        int count = NativeIntset.Count(set);
        int size = NativeListpack.HeaderSize + 1 + room;
        for (int i = 0; i < count; i++)
            size += NativeListpack.IntegerSize(NativeIntset.Get(set, i));
        byte* lp = NativeListpack.Create(size);
        for (int i = 0; i < count; i++)
            lp = NativeListpack.InsertInteger(lp, NativeListpack.Bytes(lp) - 1, NativeIntset.Get(set, i));
        TrackedAllocator.Free(set);
        Values.Repoint(e, ValueForm.Listpack, lp);
    }

    private static void Append(Entry* e, ReadOnlySpan<byte> member)
    {
        byte* lp = Values.Packed(e);
        Values.Repoint(e, ValueForm.Listpack, NativeListpack.InsertString(lp, NativeListpack.Bytes(lp) - 1, member));
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ReadOnlySpan<byte> Format(long value, Span<byte> scratch)
    {
        Utf8Formatter.TryFormat(value, scratch, out int written);
        return scratch[..written];
    }

    /// <summary>Room for one integer's text inside the enumerator itself.</summary>
    [InlineArray(IntegerTextMax)]
    public struct IntegerText
    {
        private byte _first;
    }

    /// <summary>
    /// Walks a set's members in its own order: an intset ascending, a listpack as stored, a hash
    /// table by bucket. Integers are formatted into scratch held inline, so a member's span is
    /// valid until the next step. The set must not change meanwhile.
    /// </summary>
    public ref struct MemberEnumerator
    {
        private readonly ValueForm _form;
        private readonly byte* _block;
        private FieldTable.Enumerator _table;
        private int _index;
        private byte* _text;
        private int _length;
        private IntegerText _scratch;

        public MemberEnumerator(Entry* e)
        {
            _form = e->Form;
            _block = _form == ValueForm.Structure ? null : Values.Packed(e);
            _table = _form == ValueForm.Structure ? Values.Set(e)->GetEnumerator() : default;
            _index = _form == ValueForm.Listpack ? NativeListpack.First : 0;
        }

        public readonly MemberEnumerator GetEnumerator() => this;

        /// <summary>True when the current member is an integer (<see cref="Integer"/> holds it): always in an intset, for integer elements of a listpack.</summary>
        public bool IsInteger { get; private set; }

        public long Integer { get; private set; }

        public bool MoveNext()
        {
            switch (_form)
            {
                case ValueForm.Intset:
                    if (_index >= NativeIntset.Count(_block))
                        return false;
                    Integer = NativeIntset.Get(_block, _index++);
                    IsInteger = true;
                    return true;
                case ValueForm.Listpack:
                {
                    if (NativeListpack.IsEnd(_block, _index))
                        return false;
                    var element = NativeListpack.Read(_block, _index, out _index);
                    IsInteger = element.IsInteger;
                    Integer = element.Integer;
                    if (!IsInteger)
                    {
                        ReadOnlySpan<byte> bytes = element.Span;
                        fixed (byte* text = bytes) // the listpack's own bytes: native memory, never moved by the GC
                            _text = text;
                        _length = bytes.Length;
                    }
                    return true;
                }
                default:
                    if (!_table.MoveNext())
                        return false;
                    FieldNode* node = _table.Current;
                    IsInteger = false;
                    _text = (byte*)node + FieldNode.HeaderSize;
                    _length = node->FieldLength;
                    return true;
            }
        }

        [UnscopedRef]
        public ReadOnlySpan<byte> Current
        {
            get
            {
                if (!IsInteger)
                    return new ReadOnlySpan<byte>(_text, _length);
                Span<byte> scratch = _scratch;
                Utf8Formatter.TryFormat(Integer, scratch, out int written);
                return scratch[..written];
            }
        }
    }
}
