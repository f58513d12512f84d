using System.Buffers;
using KeraLua;
using MessagePack;
using static Diagnostics.Server.Scripting.Libraries.LuaApi;

namespace Diagnostics.Server.Scripting.Libraries;

/// <summary>
/// The global <c>cmsgpack</c> table: lua-cmsgpack 0.4.0 as Redis 7 bundles it (pack, unpack,
/// unpack_one, unpack_limit and its _NAME/_VERSION/_COPYRIGHT/_DESCRIPTION). The wire format is
/// MessagePack-CSharp's MessagePackWriter and MessagePackReader; the choices are cmsgpack's:
/// integral numbers as the smallest int, other numbers as float32 when that is exact, else float64;
/// a table as an array when its keys are exactly 1..n, else a map; tables nested 16 deep as nil;
/// bin and ext types refused on unpack. The C# half returns false plus a message on failure and the
/// Lua half raises it (see <see cref="LibraryChunk"/>).
/// </summary>
internal static class CmsgpackLibrary
{
    // Lua holds pointers to these delegates' thunks: they must live as long as the process.
    private static readonly LuaFunction PackFunction = Pack;
    private static readonly LuaFunction UnpackFunction = Unpack;

    /// <summary>cmsgpack's LUACMSGPACK_MAX_NESTING: a table at this depth is packed as nil (so cycles end).</summary>
    private const int MaxNesting = 16;

    /// <summary>
    /// LUAI_MAXCSTACK of Redis's Lua 5.1: lua_checkstack refuses to grow a C function's stack past
    /// it, which is what bounds cmsgpack's unpacking (deep nesting, many values). Counting the slots
    /// 5.1 would use reproduces its limits and messages exactly; 5.4's own limit is far higher.
    /// </summary>
    private const int Lua51StackLimit = 8000;

    private const string MissingBytes = "Missing bytes in input.";
    private const string BadFormat = "Bad data format in input.";
    private const string TooManyValues = "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)";
    private const string ArrayTooDeep = "stack overflow (in function mp_decode_to_lua_array)";

    private const string Source = """
        local raw_pack, raw_unpack = ...

        -- luaL_checklstring / luaL_checkinteger / luaL_optinteger of 5.1 (depth 1: called from the library function).
        local function checkstring(name, i, count, value)
          if type(value) == "number" then return tostring(number51(value)) end
          if type(value) ~= "string" then argerror(name, i, "string expected, got " .. typename(i, count, value), 1) end
          return value
        end
        local function checkinteger(name, i, count, value)
          local n = tointeger51(value)
          if n == nil then argerror(name, i, "number expected, got " .. typename(i, count, value), 1) end
          return n
        end
        local function optinteger(name, i, count, value, default)
          if value == nil then return default end
          local n = tointeger51(value)
          if n == nil then argerror(name, i, "number expected, got " .. type(value), 1) end
          return n
        end

        -- Reached by a tail call from the library function, so it stands in that function's frame.
        local function finish(ok, ...)
          if not ok then raise((...)) end
          return ...
        end

        local cmsgpack = {
          _NAME = "cmsgpack",
          _VERSION = "lua-cmsgpack 0.4.0",
          _COPYRIGHT = "Copyright (C) 2012, Salvatore Sanfilippo",
          _DESCRIPTION = "MessagePack C implementation for Lua",
        }

        function cmsgpack.pack(...)
          if select("#", ...) == 0 then argerror("pack", 0, "MessagePack pack needs input.") end
          local ok, packed = raw_pack(...)
          if not ok then raise(packed) end
          return packed
        end

        -- raw_unpack(s, limit, offset, slots): slots is how many stack slots 5.1 held before decoding.
        function cmsgpack.unpack(...)
          local count = select("#", ...)
          local s = checkstring("unpack", 1, count, (...))
          return finish(raw_unpack(s, 0, 0, count))
        end

        function cmsgpack.unpack_one(...)
          local count = select("#", ...)
          local s, offset = ...
          offset = optinteger("unpack_one", 2, count, offset, 0)
          s = checkstring("unpack_one", 1, count, s)
          return finish(raw_unpack(s, 1, offset, 1))
        end

        function cmsgpack.unpack_limit(...)
          local count = select("#", ...)
          local s, limit, offset = ...
          limit = checkinteger("unpack_limit", 2, count, limit)
          offset = optinteger("unpack_limit", 3, count, offset, 0)
          s = checkstring("unpack_limit", 1, count, s)
          return finish(raw_unpack(s, limit, offset, 1))
        end

        rawset(_ENV, "cmsgpack", cmsgpack)
        """;

    internal static void Open(KeraLua.Lua lua) => LibraryChunk.Run(lua, "cmsgpack", Source, PackFunction, UnpackFunction);

    private static int Fail(IntPtr l, string message)
    {
        lua_settop(l, 0);
        lua_pushboolean(l, 0);
        PushString(l, message);
        return 2;
    }

    // ---- pack ------------------------------------------------------------------------------

    /// <summary>raw_pack(...): true and every argument packed back to back, or false and a message.</summary>
    private static int Pack(IntPtr l)
    {
        try
        {
            int count = lua_gettop(l);
            if (lua_checkstack(l, 8) == 0)
                return Fail(l, "stack overflow");
            var output = new ArrayBufferWriter<byte>(64);
            var writer = new MessagePackWriter(output);
            for (int i = 1; i <= count; i++)
            {
                lua_pushvalue(l, i);
                Encode(l, ref writer, 0);
            }
            writer.Flush();
            lua_settop(l, 0);
            lua_pushboolean(l, 1);
            PushBytes(l, output.WrittenSpan);
            return 2;
        }
        catch (Exception e)
        {
            return Fail(l, e.Message);
        }
    }

    /// <summary>Packs the value on top of the stack and pops it (mp_encode_lua_type).</summary>
    private static void Encode(IntPtr l, ref MessagePackWriter writer, int level)
    {
        int type = lua_type(l, -1);
        if (type == TypeTable && level == MaxNesting)
            type = TypeNil;
        switch (type)
        {
            case TypeString:
                writer.WriteString(ToBytes(l, -1));
                break;
            case TypeBoolean:
                writer.Write(lua_toboolean(l, -1) != 0);
                break;
            case TypeNumber:
                if (lua_isinteger(l, -1) != 0)
                    writer.Write(ToInteger(l, -1));
                else
                    EncodeFloat(ref writer, ToNumber(l, -1));
                break;
            case TypeTable:
                EncodeTable(l, ref writer, level);
                break;
            default:
                writer.WriteNil();
                break;
        }
        Pop(l, 1);
    }

    /// <summary>
    /// A float that is a whole number in int64's range packs as an integer (IS_INT64_EQUIVALENT);
    /// otherwise float32 when converting loses nothing, else float64 (NaN never equals itself, so
    /// it is float64, as in cmsgpack).
    /// </summary>
    private static void EncodeFloat(ref MessagePackWriter writer, double value)
    {
        if (value >= -9223372036854775808.0 && value < 9223372036854775808.0 && value == Math.Floor(value))
        {
            writer.Write((long)value);
            return;
        }
        float single = (float)value;
        if ((double)single == value)
            writer.Write(single);
        else
            writer.Write(value);
    }

    private static void EncodeTable(IntPtr l, ref MessagePackWriter writer, int level)
    {
        if (lua_checkstack(l, 3) == 0)
            throw new InvalidOperationException("stack overflow");
        int length = ArrayLength(l);
        if (length >= 0)
        {
            writer.WriteArrayHeader(length);
            for (int i = 1; i <= length; i++)
            {
                lua_rawgeti(l, -1, i);
                Encode(l, ref writer, level + 1);
            }
            return;
        }
        int pairs = 0;
        lua_pushnil(l);
        while (lua_next(l, -2) != 0)
        {
            Pop(l, 1);
            pairs++;
        }
        writer.WriteMapHeader(pairs);
        lua_pushnil(l);
        while (lua_next(l, -2) != 0)
        {
            lua_pushvalue(l, -2);
            Encode(l, ref writer, level + 1);   // the key
            Encode(l, ref writer, level + 1);   // the value
        }
    }

    /// <summary>
    /// table_is_an_array: the count of keys when they are exactly the integers 1..n (each one a C
    /// int, as 5.1's IS_INT_EQUIVALENT asks), else -1. An empty table is an array of 0.
    /// </summary>
    private static int ArrayLength(IntPtr l)
    {
        int count = 0, max = 0;
        lua_pushnil(l);
        while (lua_next(l, -2) != 0)
        {
            Pop(l, 1);
            long key;
            if (lua_isinteger(l, -1) == 0 || (key = ToInteger(l, -1)) <= 0 || key > int.MaxValue)
            {
                Pop(l, 1);
                return -1;
            }
            if (key > max)
                max = (int)key;
            count++;
        }
        return max == count ? count : -1;
    }

    // ---- unpack ----------------------------------------------------------------------------

    /// <summary>
    /// raw_unpack(s, limit, offset, slots): true, then (unless limit and offset are both 0, which
    /// means "everything") the next offset or -1 at the end, then the values; or false and a message.
    /// </summary>
    private static int Unpack(IntPtr l)
    {
        byte[]? rented = null;
        try
        {
            long limit = ToInteger(l, 2);
            long offset = ToInteger(l, 3);
            int used = (int)Math.Min(ToInteger(l, 4), Lua51StackLimit);
            ReadOnlySpan<byte> input = ToBytes(l, 1);
            int length = input.Length;
            bool all = limit == 0 && offset == 0;
            if (offset < 0 || limit < 0)
                return Fail(l, $"Invalid request to unpack with offset of {unchecked((int)offset)} and limit of {length}.");
            if (offset > length)
                return Fail(l, $"Start offset {unchecked((int)offset)} greater than input length {length}.");
            if (all)
                limit = int.MaxValue;

            rented = ArrayPool<byte>.Shared.Rent(Math.Max(length, 1));
            input.CopyTo(rented);
            lua_settop(l, 0);
            lua_pushboolean(l, 1);
            if (!all)
                lua_pushnil(l);   // the next offset's place, filled in at the end

            var reader = new MessagePackReader(new ReadOnlyMemory<byte>(rented, (int)offset, length - (int)offset));
            for (long values = 0; !reader.End && values < limit; values++)
            {
                string? error = Decode(l, ref reader, ref used);
                if (error is not null)
                    return Fail(l, error);
            }
            if (!all)
            {
                if (used + 1 > Lua51StackLimit)
                    return Fail(l, "stack overflow (in function mp_unpack_full)");
                long next = reader.End ? -1 : length - Remaining(ref reader);
                lua_pushinteger(l, next);
                lua_copy(l, -1, 2);
                Pop(l, 1);
            }
            return lua_gettop(l);
        }
        catch (Exception e)
        {
            return Fail(l, e.Message);
        }
        finally
        {
            if (rented is not null)
                ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <summary>
    /// Decodes one value onto the Lua stack (mp_decode_to_lua_type), or returns cmsgpack's message.
    /// <paramref name="used"/> counts the stack slots Lua 5.1 would hold, to fail where it fails.
    /// </summary>
    private static string? Decode(IntPtr l, ref MessagePackReader reader, ref int used)
    {
        if (reader.End)
            return MissingBytes;
        if (used + 1 > Lua51StackLimit)
            return TooManyValues;
        if (!System.Runtime.CompilerServices.RuntimeHelpers.TryEnsureSufficientExecutionStack() || lua_checkstack(l, 2) == 0)
            return TooManyValues;
        try
        {
            byte code = reader.NextCode;
            switch (code)
            {
                case 0xcc: case 0xcd: case 0xce: case 0xd0: case 0xd1: case 0xd2: case 0xd3:
                    PushIntegerAsLua51(l, reader.ReadInt64());
                    break;
                case 0xcf:
                    // cmsgpack pushes a uint64 as a signed lua_Integer: 2^64-1 reads back as -1.
                    PushIntegerAsLua51(l, unchecked((long)reader.ReadUInt64()));
                    break;
                case 0xc0:
                    reader.ReadNil();
                    lua_pushnil(l);
                    break;
                case 0xc2: case 0xc3:
                    lua_pushboolean(l, reader.ReadBoolean() ? 1 : 0);
                    break;
                case 0xca:
                    PushNumberAsLua51(l, reader.ReadSingle());
                    break;
                case 0xcb:
                    PushNumberAsLua51(l, reader.ReadDouble());
                    break;
                case 0xd9: case 0xda: case 0xdb:
                    PushStringValue(l, ref reader);
                    break;
                case 0xdc: case 0xdd:
                    return DecodeArray(l, ref reader, ContainerLength(ref reader, code), ref used);
                case 0xde: case 0xdf:
                    return DecodeMap(l, ref reader, ContainerLength(ref reader, code), ref used);
                default:
                    if ((code & 0x80) == 0 || (code & 0xe0) == 0xe0)
                        PushIntegerAsLua51(l, reader.ReadInt64());
                    else if ((code & 0xe0) == 0xa0)
                        PushStringValue(l, ref reader);
                    else if ((code & 0xf0) == 0x90)
                        return DecodeArray(l, ref reader, ContainerLength(ref reader, code), ref used);
                    else if ((code & 0xf0) == 0x80)
                        return DecodeMap(l, ref reader, ContainerLength(ref reader, code), ref used);
                    else
                        return BadFormat;   // bin, ext, and the never-used 0xc1
                    break;
            }
        }
        catch (Exception)
        {
            // Past the dispatch on the first byte, the reader fails only on input that ends too
            // soon (EndOfStreamException, or a 32-bit length beyond what the input could hold).
            return MissingBytes;
        }
        used++;
        return null;
    }

    private static long Remaining(ref MessagePackReader reader) => reader.Sequence.Length - reader.Consumed;

    private static void PushStringValue(IntPtr l, ref MessagePackReader reader)
    {
        if (reader.TryReadStringSpan(out var span))
        {
            PushBytes(l, span);
            return;
        }
        var sequence = reader.ReadStringSequence() ?? default;
        PushBytes(l, sequence.IsSingleSegment ? sequence.FirstSpan : sequence.ToArray());
    }

    /// <summary>
    /// An array or map header, read by hand: MessagePackReader's ReadArrayHeader refuses a count
    /// larger than the bytes left before reading any element, where cmsgpack reads elements until
    /// one is missing or malformed, and the two report different errors.
    /// </summary>
    private static long ContainerLength(ref MessagePackReader reader, byte code)
    {
        int size = code is 0xdc or 0xde ? 3 : code is 0xdd or 0xdf ? 5 : 1;
        var header = reader.ReadRaw(size);   // throws EndOfStreamException when short
        Span<byte> bytes = stackalloc byte[5];
        header.CopyTo(bytes);
        return size switch
        {
            1 => code & 0x0f,
            3 => (bytes[1] << 8) | bytes[2],
            _ => ((long)bytes[1] << 24) | ((long)bytes[2] << 16) | ((long)bytes[3] << 8) | bytes[4],
        };
    }

    private static string? DecodeArray(IntPtr l, ref MessagePackReader reader, long count, ref int used)
    {
        // Not presized: 5.1 grew the table key by key, and # of an array with nil holes depends on it.
        lua_createtable(l, 0, 0);
        used++;
        if (used + 1 > Lua51StackLimit)
            return ArrayTooDeep;
        for (long i = 1; i <= count; i++)
        {
            used++;   // 5.1 pushes the index before the element
            string? error = Decode(l, ref reader, ref used);
            if (error is not null)
                return error;
            lua_rawseti(l, -2, i);
            used -= 2;
        }
        return null;
    }

    private static string? DecodeMap(IntPtr l, ref MessagePackReader reader, long count, ref int used)
    {
        lua_createtable(l, 0, 0);
        used++;
        for (long i = 0; i < count; i++)
        {
            string? error = Decode(l, ref reader, ref used) ?? Decode(l, ref reader, ref used);
            if (error is not null)
                return error;
            // lua_settable of 5.1 refuses these keys; lua_rawset of 5.4 would raise (longjmp).
            int keyType = lua_type(l, -2);
            if (keyType == TypeNil)
                return "table index is nil";
            if (keyType == TypeNumber && double.IsNaN(ToNumber(l, -2)))
                return "table index is NaN";
            lua_rawset(l, -3);
            used -= 2;
        }
        return null;
    }
}
