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

        -- BitOp's barg: lua_tonumber, then the low 32 bits of (n + 2^52 + 2^51). A value that is no
        -- number converts to 0, which BitOp reports as "number expected" (depth: barg sits between
        -- the library function and argerror).
        local function barg(name, i, count, value)
          local n = tonumber(value)
          if n == nil then
            argerror(name, i, "number expected, got " .. typename(i, count, value), 1)
          end
          return (string_unpack("<i4", string_pack("<d", n + 6755399441055744.0)))
        end

        local function s32(b)
          b = b & 0xffffffff
          if b >= 0x80000000 then b = b - 0x100000000 end
          return b
        end

        local bit = {}

        function bit.tobit(...)
          local b = barg("tobit", 1, select("#", ...), (...))
          return b
        end

        function bit.bnot(...)
          local b = barg("bnot", 1, select("#", ...), (...))
          return ~b
        end

        -- band, bor and bxor fold the arguments from the last one down to the second, as BitOp does
        -- (so an error names the last bad argument).
        function bit.band(...)
          local count = select("#", ...)
          local b = barg("band", 1, count, (...))
          for i = count, 2, -1 do b = b & barg("band", i, count, (select(i, ...))) end
          return b
        end

        function bit.bor(...)
          local count = select("#", ...)
          local b = barg("bor", 1, count, (...))
          for i = count, 2, -1 do b = b | barg("bor", i, count, (select(i, ...))) end
          return b
        end

        function bit.bxor(...)
          local count = select("#", ...)
          local b = barg("bxor", 1, count, (...))
          for i = count, 2, -1 do b = b ~ barg("bxor", i, count, (select(i, ...))) end
          return b
        end

        function bit.lshift(...)
          local count = select("#", ...)
          local b = barg("lshift", 1, count, (...))
          local n = barg("lshift", 2, count, (select(2, ...))) & 31
          return s32(b << n)
        end

        function bit.rshift(...)
          local count = select("#", ...)
          local b = barg("rshift", 1, count, (...))
          local n = barg("rshift", 2, count, (select(2, ...))) & 31
          return s32((b & 0xffffffff) >> n)
        end

        function bit.arshift(...)
          local count = select("#", ...)
          local b = barg("arshift", 1, count, (...))
          local n = barg("arshift", 2, count, (select(2, ...))) & 31
          return b // (1 << n)
        end

        function bit.rol(...)
          local count = select("#", ...)
          local b = barg("rol", 1, count, (...)) & 0xffffffff
          local n = barg("rol", 2, count, (select(2, ...))) & 31
          return s32((b << n) | (b >> (32 - n)))
        end

        function bit.ror(...)
          local count = select("#", ...)
          local b = barg("ror", 1, count, (...)) & 0xffffffff
          local n = barg("ror", 2, count, (select(2, ...))) & 31
          return s32((b << (32 - n)) | (b >> n))
        end

        function bit.bswap(...)
          local b = barg("bswap", 1, select("#", ...), (...)) & 0xffffffff
          return s32((b >> 24) | ((b >> 8) & 0xff00) | ((b & 0xff00) << 8) | (b << 24))
        end

        -- tohex(x [, n]): n digits, upper case when n < 0, at most 8; Redis clamps n = -2^31
        -- (whose negation overflows) to -(2^31 - 1).
        function bit.tohex(...)
          local count = select("#", ...)
          local b = barg("tohex", 1, count, (...)) & 0xffffffff
          local n = 8
          if count >= 2 then n = barg("tohex", 2, count, (select(2, ...))) end
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
