using KeraLua;

namespace Diagnostics.Server.Scripting.Libraries;

/// <summary>
/// The global <c>bit</c> table: Lua BitOp 1.0.2 as Redis bundles it (tobit, tohex, bnot, band,
/// bor, bxor, lshift, rshift, arshift, rol, ror, bswap), every result a signed 32-bit number.
/// Written in Lua on 5.4's 64-bit integer operators. An argument becomes 32 bits as BitOp does it on
/// a double: add 2^52+2^51 and keep the low word of the IEEE bits, which rounds fractions to even
/// and wraps modulo 2^32 (string.pack("&lt;d") exposes those bits, so large and odd inputs such as
/// 2^53+3, 1e300, NaN give what redis-server gives).
/// </summary>
internal static class BitLibrary
{
    private const string Source = """
        local string_pack, string_unpack = string.pack, string.unpack

        -- BitOp's barg: the low 32 bits of (n + 2^52 + 2^51) for n = lua_tonumber(value); nil when the
        -- value is no number (the library function then raises "number expected", as BitOp does for
        -- a value that converts to 0).
        local function b32(value)
          -- Fast path, same result: an integer below 2^51 survives the addition exactly, so its
          -- low word is the integer modulo 2^32.
          if math_type(value) == "integer" and value >= -0x8000000000000 and value < 0x8000000000000 then
            value = value & 0xffffffff
            if value >= 0x80000000 then return value - 0x100000000 end
            return value
          end
          local n = tonumber(value)
          if n == nil then return nil end
          return (string_unpack("<i4", string_pack("<d", n + 6755399441055744.0)))
        end

        -- Raises for argument i of the library function's arguments (...); depth 1: called from it.
        local function bad(name, i, ...)
          argerror(name, i, "number expected, got " .. typename(i, select("#", ...), (select(i, ...))), 1)
        end

        local function s32(b)
          b = b & 0xffffffff
          if b >= 0x80000000 then return b - 0x100000000 end
          return b
        end

        local bit = {}

        function bit.tobit(...)
          local b = b32((...)) if b == nil then bad("tobit", 1, ...) end
          return b
        end

        function bit.bnot(...)
          local b = b32((...)) if b == nil then bad("bnot", 1, ...) end
          return ~b
        end

        -- band, bor and bxor fold the arguments from the last one down to the second, as BitOp
        -- does (so an error names the last bad argument).
        function bit.band(...)
          local b = b32((...)) if b == nil then bad("band", 1, ...) end
          for i = select("#", ...), 2, -1 do
            local v = b32((select(i, ...))) if v == nil then bad("band", i, ...) end
            b = b & v
          end
          return b
        end

        function bit.bor(...)
          local b = b32((...)) if b == nil then bad("bor", 1, ...) end
          for i = select("#", ...), 2, -1 do
            local v = b32((select(i, ...))) if v == nil then bad("bor", i, ...) end
            b = b | v
          end
          return b
        end

        function bit.bxor(...)
          local b = b32((...)) if b == nil then bad("bxor", 1, ...) end
          for i = select("#", ...), 2, -1 do
            local v = b32((select(i, ...))) if v == nil then bad("bxor", i, ...) end
            b = b ~ v
          end
          return b
        end

        function bit.lshift(...)
          local x, y = ...
          local b = b32(x) if b == nil then bad("lshift", 1, ...) end
          local n = b32(y) if n == nil then bad("lshift", 2, ...) end
          return s32(b << (n & 31))
        end

        function bit.rshift(...)
          local x, y = ...
          local b = b32(x) if b == nil then bad("rshift", 1, ...) end
          local n = b32(y) if n == nil then bad("rshift", 2, ...) end
          return s32((b & 0xffffffff) >> (n & 31))
        end

        function bit.arshift(...)
          local x, y = ...
          local b = b32(x) if b == nil then bad("arshift", 1, ...) end
          local n = b32(y) if n == nil then bad("arshift", 2, ...) end
          return b // (1 << (n & 31))
        end

        function bit.rol(...)
          local x, y = ...
          local b = b32(x) if b == nil then bad("rol", 1, ...) end
          local n = b32(y) if n == nil then bad("rol", 2, ...) end
          b = b & 0xffffffff
          n = n & 31
          return s32((b << n) | (b >> (32 - n)))
        end

        function bit.ror(...)
          local x, y = ...
          local b = b32(x) if b == nil then bad("ror", 1, ...) end
          local n = b32(y) if n == nil then bad("ror", 2, ...) end
          b = b & 0xffffffff
          n = n & 31
          return s32((b << (32 - n)) | (b >> n))
        end

        function bit.bswap(...)
          local b = b32((...)) if b == nil then bad("bswap", 1, ...) end
          b = b & 0xffffffff
          return s32((b >> 24) | ((b >> 8) & 0xff00) | ((b & 0xff00) << 8) | (b << 24))
        end

        -- tohex(x [, n]): n digits (8 when n is absent, not when it is nil), upper case when n < 0,
        -- at most 8; Redis clamps n = -2^31 (whose negation overflows) to -(2^31 - 1).
        function bit.tohex(...)
          local b = b32((...)) if b == nil then bad("tohex", 1, ...) end
          b = b & 0xffffffff
          local n = 8
          if select("#", ...) >= 2 then
            n = b32((select(2, ...))) if n == nil then bad("tohex", 2, ...) end
          end
          local format = "%08x"
          if n == -0x80000000 then n = n + 1 end
          if n < 0 then n = -n; format = "%08X" end
          if n > 8 then n = 8 end
          if n == 0 then return "" end
          return string_format(format, b):sub(-n)
        end

        rawset(_ENV, "bit", bit)
        """;

    internal static void Open(KeraLua.Lua lua) => LibraryChunk.Run(lua, "bit", Source);
}
