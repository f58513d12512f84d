using KeraLua;

namespace Diagnostics.Server.Scripting.Libraries;

/// <summary>
/// Runs a library's Lua half once, at Open. The chunk receives the library's C# functions as its
/// arguments (...) and sets its global table. C# never raises a Lua error (a longjmp across a
/// managed frame corrupts the runtime), so a C# function returns false plus a message and the Lua
/// half raises it, with the helpers of <see cref="Prelude"/>.
/// </summary>
internal static class LibraryChunk
{
    /// <summary>
    /// Helpers every library chunk starts with. raise and argerror build the message Lua 5.1's
    /// luaL_error / luaL_argerror give from a C function: the prefix of luaL_where(L, 1) (the
    /// caller's "chunk:line: " when a Lua function called the library, "" when C code such as pcall
    /// did) and, for argument errors, the function's name or '?' when the caller is C.
    /// error's level counts frames: 1 is pcall (which calls error here), 2 the helper, 3 the
    /// library function, 4 its caller; 'depth' adds the frames of helpers in between. Library
    /// functions call these as statements, never as tail calls, so the frames stay.
    /// </summary>
    internal const string Prelude = """
        local error, pcall, select, type, tostring, tonumber, rawset = error, pcall, select, type, tostring, tonumber, rawset
        local math_type, math_floor, math_ceil, math_tointeger = math.type, math.floor, math.ceil, math.tointeger
        local string_format = string.format

        local function raise(message, depth)
          local _, where = pcall(error, "", 4 + (depth or 0))
          error(where .. message, 0)
        end

        local function argerror(name, index, extramsg, depth)
          local _, where = pcall(error, "", 4 + (depth or 0))
          error(where .. "bad argument #" .. index .. " to '" .. (where == "" and "?" or name) .. "' (" .. extramsg .. ")", 0)
        end

        -- luaL_typename of argument i: "no value" past the last argument.
        local function typename(i, count, value)
          if i > count then return "no value" end
          return type(value)
        end

        -- lua_tointeger of 5.1 on x86-64: numbers and numeric strings, truncated toward zero; nil if
        -- the value is no number (callers raise "number expected").
        local function tointeger51(value)
          local n = tonumber(value)
          if n == nil then return nil end
          if math_type(n) == "integer" then return n end
          local t = math_tointeger(n >= 0 and math_floor(n) or math_ceil(n))
          if t == nil then return math.mininteger end
          return t
        end

        -- A C int as assigned from a lua_Integer: the low 32 bits, signed.
        local function toint32(n)
          n = n & 0xffffffff
          if n >= 0x80000000 then n = n - 0x100000000 end
          return n
        end

        -- A number as Redis's Lua 5.1 would show it (see LuaApi.PushNumberAsLua51).
        local function number51(n)
          if n == n and n > -1e14 and n < 1e14 and n == math_floor(n) and not (n == 0 and 1 / n < 0) then
            return math_tointeger(n)
          end
          return n + 0.0
        end

        """;

    /// <summary>Compiles <paramref name="source"/> after the prelude and runs it with <paramref name="functions"/> as its arguments.</summary>
    internal static void Run(KeraLua.Lua lua, string name, string source, params LuaFunction[] functions)
    {
        var status = lua.LoadString(Prelude + source, "=" + name);
        if (status != LuaStatus.OK)
            throw new InvalidOperationException($"the {name} library does not compile: {lua.ToString(-1)}");
        foreach (var function in functions)
            lua.PushCFunction(function);
        status = lua.PCall(functions.Length, 0, 0);
        if (status != LuaStatus.OK)
            throw new InvalidOperationException($"the {name} library did not open: {lua.ToString(-1)}");
    }
}
