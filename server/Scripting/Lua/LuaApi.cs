using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Diagnostics.Server.Scripting.Lua;

/// <summary>
/// The Lua 5.4 C API calls the script engine makes on its hot paths, bound to the native library
/// KeraLua ships ("lua54"). KeraLua's own wrappers are used for setting the state up; these exist
/// because its string calls copy into managed arrays or strings (a key or value would cost an
/// allocation per <c>redis.call</c>), and because callbacks here receive a raw <c>lua_State*</c>:
/// KeraLua maps one back to its wrapper object through the state's extra space, which a coroutine
/// shares with its main state.
///
/// Lua raises errors with longjmp. A longjmp across managed frames is undefined behaviour in
/// .NET, so nothing called from managed code in a callback may raise: callbacks only read the
/// stack, push values and use raw table access, and return failures as values that a Lua wrapper
/// turns into errors (see sandbox.lua).
/// </summary>
internal static unsafe partial class LuaApi
{
    private const string Library = "lua54";

    public const int RegistryIndex = -1001000; // LUA_REGISTRYINDEX: -LUAI_MAXSTACK - 1000
    public const int GlobalsSlot = 2;           // LUA_RIDX_GLOBALS

    public const int TypeNone = -1, TypeNil = 0, TypeBoolean = 1, TypeLightUserData = 2, TypeNumber = 3,
        TypeString = 4, TypeTable = 5, TypeFunction = 6, TypeUserData = 7, TypeThread = 8;

    public const int StatusOk = 0, StatusYield = 1, StatusRuntimeError = 2, StatusSyntaxError = 3,
        StatusMemoryError = 4, StatusHandlerError = 5;

    /// <summary>The pseudo-index of a C closure's upvalue <paramref name="n"/> (lua_upvalueindex).</summary>
    public static int UpvalueIndex(int n) => RegistryIndex - n;

    [LibraryImport(Library, EntryPoint = "lua_gettop")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial int GetTop(IntPtr state);

    [LibraryImport(Library, EntryPoint = "lua_settop")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial void SetTop(IntPtr state, int index);

    public static void Pop(IntPtr state, int n) => SetTop(state, -n - 1);

    [LibraryImport(Library, EntryPoint = "lua_pushvalue")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial void PushValue(IntPtr state, int index);

    [LibraryImport(Library, EntryPoint = "lua_checkstack")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial int CheckStack(IntPtr state, int n);

    [LibraryImport(Library, EntryPoint = "lua_type")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial int Type(IntPtr state, int index);

    [LibraryImport(Library, EntryPoint = "lua_isinteger")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial int IsInteger(IntPtr state, int index);

    [LibraryImport(Library, EntryPoint = "lua_tointegerx")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial long ToIntegerX(IntPtr state, int index, int* isNumber);

    [LibraryImport(Library, EntryPoint = "lua_tonumberx")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial double ToNumberX(IntPtr state, int index, int* isNumber);

    [LibraryImport(Library, EntryPoint = "lua_toboolean")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial int ToBoolean(IntPtr state, int index);

    /// <summary>The bytes of the string (or number, converted in place) at <paramref name="index"/>; null for other types.</summary>
    [LibraryImport(Library, EntryPoint = "lua_tolstring")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial byte* ToLString(IntPtr state, int index, nuint* length);

    [LibraryImport(Library, EntryPoint = "lua_touserdata")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial IntPtr ToUserData(IntPtr state, int index);

    [LibraryImport(Library, EntryPoint = "lua_rawlen")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial ulong RawLength(IntPtr state, int index);

    [LibraryImport(Library, EntryPoint = "lua_pushnil")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial void PushNil(IntPtr state);

    [LibraryImport(Library, EntryPoint = "lua_pushinteger")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial void PushInteger(IntPtr state, long value);

    [LibraryImport(Library, EntryPoint = "lua_pushnumber")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial void PushNumber(IntPtr state, double value);

    [LibraryImport(Library, EntryPoint = "lua_pushboolean")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial void PushBoolean(IntPtr state, int value);

    [LibraryImport(Library, EntryPoint = "lua_pushlstring")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial byte* PushLString(IntPtr state, byte* bytes, nuint length);

    public static void PushBytes(IntPtr state, ReadOnlySpan<byte> bytes)
    {
        fixed (byte* p = bytes)
            PushLString(state, p, (nuint)bytes.Length);
    }

    [LibraryImport(Library, EntryPoint = "lua_pushlightuserdata")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial void PushLightUserData(IntPtr state, IntPtr pointer);

    [LibraryImport(Library, EntryPoint = "lua_pushcclosure")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial void PushCClosure(IntPtr state, delegate* unmanaged[Cdecl]<IntPtr, int> function, int upvalues);

    [LibraryImport(Library, EntryPoint = "lua_createtable")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial void CreateTable(IntPtr state, int arrayItems, int hashItems);

    [LibraryImport(Library, EntryPoint = "lua_rawset")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial void RawSet(IntPtr state, int index);

    [LibraryImport(Library, EntryPoint = "lua_rawseti")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial void RawSetInteger(IntPtr state, int index, long n);

    [LibraryImport(Library, EntryPoint = "lua_rawget")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial int RawGet(IntPtr state, int index);

    [LibraryImport(Library, EntryPoint = "lua_rawgeti")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial int RawGetInteger(IntPtr state, int index, long n);

    [LibraryImport(Library, EntryPoint = "lua_next")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial int Next(IntPtr state, int index);

    [LibraryImport(Library, EntryPoint = "lua_pcallk")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial int PCallK(IntPtr state, int arguments, int results, int handler, IntPtr context, IntPtr continuation);

    public static int PCall(IntPtr state, int arguments, int results, int handler) => PCallK(state, arguments, results, handler, 0, 0);

    [LibraryImport(Library, EntryPoint = "luaL_loadbufferx")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial int LoadBufferX(IntPtr state, byte* buffer, nuint size, byte* name, byte* mode);

    /// <summary>Compiles <paramref name="source"/> as text only (never precompiled bytecode, which can break the VM) and pushes the function or the error.</summary>
    public static int LoadText(IntPtr state, ReadOnlySpan<byte> source, ReadOnlySpan<byte> nulTerminatedName)
    {
        ReadOnlySpan<byte> mode = "t\0"u8;
        fixed (byte* s = source)
        fixed (byte* n = nulTerminatedName)
        fixed (byte* m = mode)
            return LoadBufferX(state, s, (nuint)source.Length, n, m);
    }

    [LibraryImport(Library, EntryPoint = "luaL_ref")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial int Ref(IntPtr state, int table);

    [LibraryImport(Library, EntryPoint = "luaL_unref")]
    [UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
    public static partial void Unref(IntPtr state, int table, int reference);

    /// <summary>The string at <paramref name="index"/> as a span over Lua's own bytes (valid while the value stays on the stack); empty when it is not a string or number.</summary>
    public static ReadOnlySpan<byte> ToBytes(IntPtr state, int index)
    {
        nuint length;
        byte* bytes = ToLString(state, index, &length);
        return bytes == null ? default : new ReadOnlySpan<byte>(bytes, checked((int)length));
    }
}
