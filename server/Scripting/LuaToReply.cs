using System.Text;
using Diagnostics.Server.Protocol;
using Diagnostics.Server.Scripting.Lua;

namespace Diagnostics.Server.Scripting;

/// <summary>
/// A script's return value written as the caller's reply, by Redis's rules (luaReplyToRedisReply):
/// a string is a bulk string, a number an integer (truncated), true is 1 and false a null under
/// RESP2 (booleans under redis.setresp(3)), nil a null; a table with err is an error, with ok a
/// status, with double/big_number/map/set/verbatim_string their RESP3 types, and any other table
/// an array up to its first nil. Tables are read raw: a script's metatables run nothing here.
/// </summary>
internal static unsafe class LuaToReply
{
    // Redis stops where Lua's stack would run out; a self-referencing table ends as this error.
    private const int MaxDepth = 1000;

    /// <summary>Writes the value on top of the stack (left there) to <paramref name="reply"/>; <paramref name="scriptResp"/> is the protocol the script chose with redis.setresp.</summary>
    public static void Write(IntPtr lua, RespWriter reply, int scriptResp, int depth = 0)
    {
        switch (LuaApi.Type(lua, -1))
        {
            case LuaApi.TypeString:
                reply.Bulk(LuaApi.ToBytes(lua, -1));
                return;
            case LuaApi.TypeBoolean:
                bool value = LuaApi.ToBoolean(lua, -1) != 0;
                if (scriptResp == 2)
                {
                    if (value) reply.Integer(1);
                    else reply.Null();
                }
                else
                {
                    reply.Boolean(value);
                }
                return;
            case LuaApi.TypeNumber:
                reply.Integer(Truncate(lua, -1));
                return;
            case LuaApi.TypeTable:
                if (depth >= MaxDepth || LuaApi.CheckStack(lua, 4) == 0)
                {
                    reply.Error("ERR reached lua stack limit");
                    return;
                }
                WriteTable(lua, reply, scriptResp, depth);
                return;
            default:
                reply.Null();
                return;
        }
    }

    /// <summary>A Lua number as Redis casts it to an integer: towards zero, saturated.</summary>
    public static long Truncate(IntPtr lua, int index)
    {
        if (LuaApi.IsInteger(lua, index) != 0)
            return LuaApi.ToIntegerX(lua, index, null);
        double number = LuaApi.ToNumberX(lua, index, null);
        if (double.IsNaN(number))
            return long.MinValue; // what x86's conversion gives C's (long long) cast
        return number >= 9.2233720368547758e18 ? long.MinValue : number <= -9.2233720368547758e18 ? long.MinValue : (long)number;
    }

    private static void WriteTable(IntPtr lua, RespWriter reply, int scriptResp, int depth)
    {
        if (Field(lua, "err"u8) == LuaApi.TypeString)
        {
            reply.Error(ErrorText(LuaApi.ToBytes(lua, -1)));
            LuaApi.Pop(lua, 1);
            return;
        }
        LuaApi.Pop(lua, 1);
        if (Field(lua, "ok"u8) == LuaApi.TypeString)
        {
            reply.SimpleString(SingleLine(LuaApi.ToBytes(lua, -1)));
            LuaApi.Pop(lua, 1);
            return;
        }
        LuaApi.Pop(lua, 1);
        if (Field(lua, "double"u8) == LuaApi.TypeNumber)
        {
            reply.Double(LuaApi.ToNumberX(lua, -1, null));
            LuaApi.Pop(lua, 1);
            return;
        }
        LuaApi.Pop(lua, 1);
        if (Field(lua, "big_number"u8) == LuaApi.TypeString)
        {
            ReadOnlySpan<byte> digits = LuaApi.ToBytes(lua, -1);
            if (reply.Protocol == 3)
            {
                reply.WriteRaw("("u8);
                reply.WriteRaw(SingleLine(digits));
                reply.WriteRaw("\r\n"u8);
            }
            else
            {
                reply.Bulk(SingleLine(digits));
            }
            LuaApi.Pop(lua, 1);
            return;
        }
        LuaApi.Pop(lua, 1);
        if (Field(lua, "map"u8) == LuaApi.TypeTable)
        {
            reply.MapHeader(CountPairs(lua));
            LuaApi.PushNil(lua);
            while (LuaApi.Next(lua, -2) != 0)
            {
                LuaApi.PushValue(lua, -2);
                Write(lua, reply, scriptResp, depth + 1); // the key
                LuaApi.Pop(lua, 1);
                Write(lua, reply, scriptResp, depth + 1); // the value
                LuaApi.Pop(lua, 1);
            }
            LuaApi.Pop(lua, 1);
            return;
        }
        LuaApi.Pop(lua, 1);
        if (Field(lua, "set"u8) == LuaApi.TypeTable)
        {
            reply.SetHeader(CountPairs(lua));
            LuaApi.PushNil(lua);
            while (LuaApi.Next(lua, -2) != 0)
            {
                LuaApi.Pop(lua, 1);
                Write(lua, reply, scriptResp, depth + 1); // the member, kept for Next
            }
            LuaApi.Pop(lua, 1);
            return;
        }
        LuaApi.Pop(lua, 1);
        if (Field(lua, "verbatim_string"u8) == LuaApi.TypeTable)
        {
            // Stack: the table, its verbatim_string table; then format and string from the latter.
            int format = Field(lua, "format"u8);
            LuaApi.PushBytes(lua, "string"u8);
            int text = LuaApi.RawGet(lua, -3);
            if (format == LuaApi.TypeString && text == LuaApi.TypeString)
            {
                WriteVerbatim(reply, LuaApi.ToBytes(lua, -2), LuaApi.ToBytes(lua, -1));
                LuaApi.Pop(lua, 3);
                return;
            }
            LuaApi.Pop(lua, 2);
        }
        LuaApi.Pop(lua, 1);

        // An array: its elements up to the first nil.
        long count = 0;
        while (LuaApi.RawGetInteger(lua, -1, count + 1) != LuaApi.TypeNil)
        {
            LuaApi.Pop(lua, 1);
            count++;
        }
        LuaApi.Pop(lua, 1);
        reply.ArrayHeader(count);
        for (long i = 1; i <= count; i++)
        {
            LuaApi.RawGetInteger(lua, -1, i);
            Write(lua, reply, scriptResp, depth + 1);
            LuaApi.Pop(lua, 1);
        }
    }

    /// <summary>Pushes table[name] (raw) and returns its type.</summary>
    private static int Field(IntPtr lua, ReadOnlySpan<byte> name)
    {
        LuaApi.PushBytes(lua, name);
        return LuaApi.RawGet(lua, -2);
    }

    /// <summary>The number of pairs in the table on top of the stack.</summary>
    private static long CountPairs(IntPtr lua)
    {
        long pairs = 0;
        LuaApi.PushNil(lua);
        while (LuaApi.Next(lua, -2) != 0)
        {
            LuaApi.Pop(lua, 1);
            pairs++;
        }
        return pairs;
    }

    private static void WriteVerbatim(RespWriter reply, ReadOnlySpan<byte> format, ReadOnlySpan<byte> text)
    {
        if (reply.Protocol != 3 || format.Length != 3)
        {
            reply.Bulk(text);
            return;
        }
        Span<byte> header = stackalloc byte[24];
        header[0] = (byte)'=';
        System.Buffers.Text.Utf8Formatter.TryFormat(text.Length + 4, header[1..], out int n);
        header[n + 1] = (byte)'\r';
        header[n + 2] = (byte)'\n';
        reply.WriteRaw(header[..(n + 3)]);
        reply.WriteRaw(format);
        reply.WriteRaw(":"u8);
        reply.WriteRaw(text);
        reply.WriteRaw("\r\n"u8);
    }

    /// <summary>An error table's text as Redis replies it: as written (error_reply drops a leading '-', a table made by hand keeps it).</summary>
    public static string ErrorText(ReadOnlySpan<byte> text) => Encoding.UTF8.GetString(text);

    /// <summary>The text with CR and LF as spaces (a status line cannot hold them); the text itself when it has none.</summary>
    private static ReadOnlySpan<byte> SingleLine(ReadOnlySpan<byte> text)
    {
        if (text.IndexOfAny((byte)'\r', (byte)'\n') < 0)
            return text;
        byte[] copy = text.ToArray();
        for (int i = 0; i < copy.Length; i++)
            if (copy[i] is (byte)'\r' or (byte)'\n')
                copy[i] = (byte)' ';
        return copy;
    }
}
