using System.Buffers.Text;
using Diagnostics.Server.Protocol;
using Diagnostics.Server.Scripting.Lua;

namespace Diagnostics.Server.Scripting;

/// <summary>
/// A command's reply, as the server wrote it for a script's client, turned into the Lua value
/// redis.call returns, by Redis's rules (redisProtocolToLuaType): integers are numbers, bulk
/// strings are strings, a null bulk or null array is false, arrays are tables, a status is
/// {ok=...} and an error {err=...}; under redis.setresp(3) a map is {map={...}}, a set
/// {set={member=true}}, a null is nil, a boolean a boolean, a double {double=n}, a big number
/// {big_number=s} and a verbatim string {verbatim_string={format=, string=}}. Attributes are
/// dropped. The bytes come from our own writer, but every length is still checked.
/// </summary>
internal static unsafe class ReplyToLua
{
    // Deeper than any reply the server writes; a malformed one stops here instead of overflowing.
    private const int MaxDepth = 200;

    /// <summary>Pushes the value at <paramref name="position"/>; returns the position after it, or -1 when the reply is malformed (nil pushed).</summary>
    public static int Push(IntPtr lua, ReadOnlySpan<byte> reply, int position, int depth = 0)
    {
        if (depth > MaxDepth || position >= reply.Length || LuaApi.CheckStack(lua, 4) == 0)
            return Malformed(lua);
        byte kind = reply[position];
        int lineEnd = reply[position..].IndexOf("\r\n"u8);
        if (lineEnd < 0)
            return Malformed(lua);
        lineEnd += position;
        ReadOnlySpan<byte> line = reply[(position + 1)..lineEnd];
        int next = lineEnd + 2;
        switch (kind)
        {
            case (byte)'+':
                PushField(lua, "ok"u8, line);
                return next;
            case (byte)'-':
                PushField(lua, "err"u8, line);
                return next;
            case (byte)':':
                if (!Utf8Parser.TryParse(line, out long integer, out int used) || used != line.Length)
                    return Malformed(lua);
                LuaApi.PushInteger(lua, integer);
                return next;
            case (byte)'$':
            case (byte)'!':
            case (byte)'=':
            case (byte)'(':
                return PushBlob(lua, reply, kind, line, next);
            case (byte)'*':
            case (byte)'>':
                return PushArray(lua, reply, line, next, depth);
            case (byte)'%':
            case (byte)'~':
                return PushMapOrSet(lua, reply, kind, line, next, depth);
            case (byte)'|':
                // An attribute: its pairs are skipped (popped), the value after it is the reply.
                if (!TryCount(line, out long pairs))
                    return Malformed(lua);
                for (long i = 0; i < pairs * 2 && next >= 0; i++)
                {
                    next = Push(lua, reply, next, depth + 1);
                    LuaApi.Pop(lua, 1);
                }
                return next < 0 ? Malformed(lua) : Push(lua, reply, next, depth + 1);
            case (byte)'_':
                LuaApi.PushNil(lua);
                return next;
            case (byte)'#':
                LuaApi.PushBoolean(lua, line.Length == 1 && line[0] == (byte)'t' ? 1 : 0);
                return next;
            case (byte)',':
                if (!NumberFormat.TryParseDouble(line, out double value))
                    return Malformed(lua);
                LuaApi.CreateTable(lua, 0, 1);
                LuaApi.PushBytes(lua, "double"u8);
                LuaApi.PushNumber(lua, value);
                LuaApi.RawSet(lua, -3);
                return next;
            default:
                return Malformed(lua);
        }
    }

    private static int PushBlob(IntPtr lua, ReadOnlySpan<byte> reply, byte kind, ReadOnlySpan<byte> line, int next)
    {
        if (kind == (byte)'(')
        {
            PushField(lua, "big_number"u8, line);
            return next;
        }
        if (!Utf8Parser.TryParse(line, out long length, out int used) || used != line.Length)
            return Malformed(lua);
        if (length < 0)
        {
            LuaApi.PushBoolean(lua, 0); // a null bulk string is false
            return next;
        }
        if (length > reply.Length - next - 2)
            return Malformed(lua);
        ReadOnlySpan<byte> body = reply.Slice(next, (int)length);
        next += (int)length + 2;
        if (kind == (byte)'$')
        {
            LuaApi.PushBytes(lua, body);
        }
        else if (kind == (byte)'!')
        {
            PushField(lua, "err"u8, body);
        }
        else
        {
            // =15\r\ntxt:Some string: {verbatim_string={format="txt", string="Some string"}}
            if (body.Length < 4 || body[3] != (byte)':')
                return Malformed(lua);
            LuaApi.CreateTable(lua, 0, 1);
            LuaApi.PushBytes(lua, "verbatim_string"u8);
            LuaApi.CreateTable(lua, 0, 2);
            LuaApi.PushBytes(lua, "format"u8);
            LuaApi.PushBytes(lua, body[..3]);
            LuaApi.RawSet(lua, -3);
            LuaApi.PushBytes(lua, "string"u8);
            LuaApi.PushBytes(lua, body[4..]);
            LuaApi.RawSet(lua, -3);
            LuaApi.RawSet(lua, -3);
        }
        return next;
    }

    private static int PushArray(IntPtr lua, ReadOnlySpan<byte> reply, ReadOnlySpan<byte> line, int next, int depth)
    {
        if (!Utf8Parser.TryParse(line, out long count, out int used) || used != line.Length)
            return Malformed(lua);
        if (count < 0)
        {
            LuaApi.PushBoolean(lua, 0); // a null array is false
            return next;
        }
        LuaApi.CreateTable(lua, (int)Math.Min(count, 1 << 20), 0);
        for (long i = 1; i <= count; i++)
        {
            next = Push(lua, reply, next, depth + 1);
            if (next < 0)
                return MalformedAfter(lua, 2);
            LuaApi.RawSetInteger(lua, -2, i);
        }
        return next;
    }

    private static int PushMapOrSet(IntPtr lua, ReadOnlySpan<byte> reply, byte kind, ReadOnlySpan<byte> line, int next, int depth)
    {
        if (!TryCount(line, out long count))
            return Malformed(lua);
        bool map = kind == (byte)'%';
        LuaApi.CreateTable(lua, 0, 1);
        LuaApi.PushBytes(lua, map ? "map"u8 : "set"u8);
        LuaApi.CreateTable(lua, 0, (int)Math.Min(count, 1 << 20));
        for (long i = 0; i < count; i++)
        {
            next = Push(lua, reply, next, depth + 1);
            if (next < 0)
                return MalformedAfter(lua, 4);
            if (map)
            {
                next = Push(lua, reply, next, depth + 1);
                if (next < 0)
                    return MalformedAfter(lua, 5);
            }
            else
            {
                LuaApi.PushBoolean(lua, 1);
            }
            // A nil key (a RESP3 null member) cannot be stored: Lua would raise. Dropped.
            if (LuaApi.Type(lua, -2) == LuaApi.TypeNil)
                LuaApi.Pop(lua, 2);
            else
                LuaApi.RawSet(lua, -3);
        }
        LuaApi.RawSet(lua, -3);
        return next;
    }

    private static bool TryCount(ReadOnlySpan<byte> line, out long count)
        => Utf8Parser.TryParse(line, out count, out int used) && used == line.Length && count >= 0;

    /// <summary>Pushes {<paramref name="field"/>=<paramref name="text"/>}.</summary>
    private static void PushField(IntPtr lua, ReadOnlySpan<byte> field, ReadOnlySpan<byte> text)
    {
        LuaApi.CreateTable(lua, 0, 1);
        LuaApi.PushBytes(lua, field);
        LuaApi.PushBytes(lua, text);
        LuaApi.RawSet(lua, -3);
    }

    private static int Malformed(IntPtr lua)
    {
        LuaApi.PushNil(lua);
        return -1;
    }

    /// <summary>Drops the partial values a failed nested parse left and pushes nil in their place.</summary>
    private static int MalformedAfter(IntPtr lua, int pushed)
    {
        LuaApi.Pop(lua, pushed);
        return Malformed(lua);
    }
}
