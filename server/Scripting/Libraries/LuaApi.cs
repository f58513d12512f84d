using System.Runtime.InteropServices;

namespace Diagnostics.Server.Scripting.Libraries;

/// <summary>
/// The few Lua C API calls the libraries' C# halves make, bound directly to the native Lua that
/// KeraLua ships (lua54). A callback runs on the raw lua_State pointer: KeraLua's Lua.FromIntPtr
/// would allocate a wrapper per call, and KeraLua offers strings only as copied byte[]/string.
/// Every call here is one that cannot raise a Lua error (no metamethods, no lua_error); the only
/// longjmp left is Lua's own out-of-memory, which no binding can intercept.
/// </summary>
internal static unsafe partial class LuaApi
{
    private const string Library = "lua54";

    internal const int TypeNone = -1;
    internal const int TypeNil = 0;
    internal const int TypeBoolean = 1;
    internal const int TypeLightUserData = 2;
    internal const int TypeNumber = 3;
    internal const int TypeString = 4;
    internal const int TypeTable = 5;

    [LibraryImport(Library)] internal static partial int lua_gettop(IntPtr l);
    [LibraryImport(Library)] internal static partial void lua_settop(IntPtr l, int index);
    [LibraryImport(Library)] internal static partial int lua_type(IntPtr l, int index);
    [LibraryImport(Library)] internal static partial int lua_checkstack(IntPtr l, int n);
    [LibraryImport(Library)] internal static partial int lua_isinteger(IntPtr l, int index);
    [LibraryImport(Library)] internal static partial double lua_tonumberx(IntPtr l, int index, int* isNumber);
    [LibraryImport(Library)] internal static partial long lua_tointegerx(IntPtr l, int index, int* isNumber);
    [LibraryImport(Library)] internal static partial int lua_toboolean(IntPtr l, int index);
    [LibraryImport(Library)] internal static partial IntPtr lua_touserdata(IntPtr l, int index);
    [LibraryImport(Library)] internal static partial byte* lua_tolstring(IntPtr l, int index, nuint* length);
    [LibraryImport(Library)] internal static partial int lua_next(IntPtr l, int index);
    [LibraryImport(Library)] internal static partial int lua_rawgeti(IntPtr l, int index, long n);
    [LibraryImport(Library)] internal static partial void lua_rawseti(IntPtr l, int index, long n);
    [LibraryImport(Library)] internal static partial void lua_rawset(IntPtr l, int index);
    [LibraryImport(Library)] internal static partial void lua_createtable(IntPtr l, int arrayCount, int hashCount);
    [LibraryImport(Library)] internal static partial void lua_pushvalue(IntPtr l, int index);
    [LibraryImport(Library)] internal static partial void lua_copy(IntPtr l, int fromIndex, int toIndex);
    [LibraryImport(Library)] internal static partial void lua_pushnil(IntPtr l);
    [LibraryImport(Library)] internal static partial void lua_pushboolean(IntPtr l, int value);
    [LibraryImport(Library)] internal static partial void lua_pushinteger(IntPtr l, long value);
    [LibraryImport(Library)] internal static partial void lua_pushnumber(IntPtr l, double value);
    [LibraryImport(Library)] internal static partial IntPtr lua_pushlstring(IntPtr l, byte* bytes, nuint length);
    [LibraryImport(Library)] internal static partial void lua_pushlightuserdata(IntPtr l, IntPtr pointer);

    internal static void Pop(IntPtr l, int count) => lua_settop(l, -count - 1);

    internal static double ToNumber(IntPtr l, int index) => lua_tonumberx(l, index, null);

    internal static long ToInteger(IntPtr l, int index) => lua_tointegerx(l, index, null);

    /// <summary>The bytes of the string at <paramref name="index"/>; only call it on a string (on a number lua_tolstring converts in place).</summary>
    internal static ReadOnlySpan<byte> ToBytes(IntPtr l, int index)
    {
        nuint length;
        byte* bytes = lua_tolstring(l, index, &length);
        return bytes == null ? default : new ReadOnlySpan<byte>(bytes, checked((int)length));
    }

    internal static void PushBytes(IntPtr l, ReadOnlySpan<byte> bytes)
    {
        fixed (byte* p = bytes)
            lua_pushlstring(l, p, (nuint)bytes.Length);
    }

    /// <summary>Pushes <paramref name="text"/> as UTF-8; used for error messages, on the failure path only.</summary>
    internal static void PushString(IntPtr l, string text)
    {
        if (text.Length <= 256)
        {
            Span<byte> buffer = stackalloc byte[256 * 3];
            PushBytes(l, buffer[..System.Text.Encoding.UTF8.GetBytes(text, buffer)]);
        }
        else
            PushBytes(l, System.Text.Encoding.UTF8.GetBytes(text));
    }

    /// <summary>
    /// Pushes a number as Redis's Lua 5.1 would let a script see it. 5.1 has only doubles and prints
    /// them with %.14g; 5.4 prints an integer-valued float as "1.0". So an integral value below 1e14
    /// (which %.14g prints without an exponent) becomes a 5.4 integer and prints as 5.1 did; larger
    /// or fractional values, and -0, stay floats, which 5.4 prints with the same %.14g.
    /// </summary>
    internal static void PushNumberAsLua51(IntPtr l, double value)
    {
        if (Math.Abs(value) < 1e14 && value == Math.Floor(value) && !(value == 0 && double.IsNegative(value)))
            lua_pushinteger(l, (long)value);
        else
            lua_pushnumber(l, value);
    }

    /// <summary>An integer a 5.1 library would have pushed as a double: see <see cref="PushNumberAsLua51(IntPtr, double)"/>.</summary>
    internal static void PushIntegerAsLua51(IntPtr l, long value)
    {
        if (value > -100_000_000_000_000 && value < 100_000_000_000_000)
            lua_pushinteger(l, value);
        else
            lua_pushnumber(l, value);
    }
}
