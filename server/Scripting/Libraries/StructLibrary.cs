using KeraLua;

namespace Diagnostics.Server.Scripting.Libraries;

/// <summary>
/// The global <c>struct</c> table: Roberto Ierusalimschy's struct library as Redis 7 bundles it
/// (pack, unpack, size), written in Lua over 5.4's string.pack/string.unpack and integer operators.
/// It is not a translation to string.pack formats because the two differ where scripts can see it:
/// struct's 'l'/'L'/'T' are 8 bytes, 'i' takes sizes up to 32 (bytes past the 8th are zero /
/// ignored, not range-checked), values are truncated and wrapped rather than rejected, '!' aligns
/// to min(size, alignment) with its own padding rule, 'c0' unpacks a length read just before,
/// 's' is NUL-terminated, and unpacked numbers are 5.1 doubles. Floats and doubles do go through
/// string.pack, which converts exactly as the C casts did.
/// </summary>
internal static class StructLibrary
{
    private const string Source = """
        local string_pack, string_unpack, string_char, string_byte, string_find, string_sub =
          string.pack, string.unpack, string.char, string.byte, string.find, string.sub
        local table_unpack, table_concat = table.unpack, table.concat

        local MAXINTSIZE = 32
        local MAXALIGN = 8   -- offsetof(struct { char c; double d; }, d) on x86-64 / arm64
        local BIG, LITTLE = 0, 1
        local NATIVE = LITTLE

        -- luaL_checkstring of 5.1: a string, or a number converted to one; C code stops at a NUL.
        local function checkformat(name, count, fmt)
          if type(fmt) == "number" then fmt = tostring(fmt) end
          if type(fmt) ~= "string" then
            argerror(name, 1, "string expected, got " .. typename(1, count, fmt), 1)
          end
          local nul = string_find(fmt, "\0", 1, true)
          if nul then fmt = string_sub(fmt, 1, nul - 1) end
          return fmt
        end

        -- The digits after an option (depth: caller helper frames between library function and here).
        local function getnum(fmt, i, default, depth)
          local c = string_byte(fmt, i)
          if c == nil or c < 48 or c > 57 then return default, i end
          local a = 0
          repeat
            local d = c - 48
            if a > 214748364 or a * 10 > 2147483647 - d then raise("integral size overflow", depth + 1) end
            a = a * 10 + d
            i = i + 1
            c = string_byte(fmt, i)
          until c == nil or c < 48 or c > 57
          return a, i
        end

        local SIZES = { B = 1, b = 1, H = 2, h = 2, L = 8, l = 8, T = 8, f = 4, d = 8, x = 1 }

        -- optsize: the size of option opt whose digits start at fmt[i]; returns size, next index.
        local function optsize(opt, fmt, i, depth)
          local size = SIZES[opt]
          if size then return size, i end
          if opt == "c" then
            local n, j = getnum(fmt, i, 1, depth + 1)   -- not a tail call: raise counts this frame
            return n, j
          end
          if opt == "i" or opt == "I" then
            local sz
            sz, i = getnum(fmt, i, 4, depth + 1)
            if sz > MAXINTSIZE then
              raise(string_format("integral size %d is larger than limit of %d", sz, MAXINTSIZE), depth + 1)
            end
            return sz, i
          end
          return 0, i
        end

        local function gettoalign(len, align, opt, size)
          if size == 0 or opt == "c" then return 0 end
          if size > align then size = align end
          return (size - (len & (size - 1))) & (size - 1)
        end

        -- controloptions: endianness, alignment, blanks; anything else is an invalid option.
        local function controloptions(name, opt, fmt, i, h, depth)
          if opt == " " then return i end
          if opt == ">" then h.endian = BIG return i end
          if opt == "<" then h.endian = LITTLE return i end
          if opt == "!" then
            local a
            a, i = getnum(fmt, i, MAXALIGN, depth + 1)
            if not (a > 0 and (a & (a - 1)) == 0) then
              raise(string_format("alignment %d is not a power of 2", a), depth + 1)
            end
            h.align = a
            return i
          end
          argerror(name, 1, "invalid format option '" .. opt .. "'", depth + 1)
        end

        -- luaL_checknumber of 5.1 on pack's argument i. pack pushes a nil after its arguments (a
        -- marker), so the first missing argument is "nil", not "no value".
        local function checknumber(name, i, count, value, depth)
          local n = tonumber(value)
          if n == nil then argerror(name, i, "number expected, got " .. typename(i, count + 1, value), depth + 1) end
          return n + 0.0   -- 5.1 numbers are doubles: an integer beyond 2^53 rounds as it would there
        end

        -- The 64-bit pattern struct's putinteger stores: (unsigned long)(long)n for n < 0, else
        -- (unsigned long)n, with x86-64's results where C leaves the conversion undefined.
        local function tobits(n)
          if n < 0 then
            if n >= -9223372036854775808.0 then return math_tointeger(math_ceil(n)) end
            return math.mininteger
          end
          if n ~= n then return 0 end
          if n < 9223372036854775808.0 then return math_tointeger(math_floor(n)) end
          local m = n - 9223372036854775808.0
          if m < 9223372036854775808.0 then return math_tointeger(math_floor(m)) ~ math.mininteger end
          return 0
        end

        local function putinteger(parts, value, endian, size)
          local bytes = {}
          for k = 1, size do
            bytes[k] = value & 0xff
            value = value >> 8
          end
          if endian == BIG then
            local reversed = {}
            for k = 1, size do reversed[k] = bytes[size - k + 1] end
            bytes = reversed
          end
          if size > 0 then parts[#parts + 1] = string_char(table_unpack(bytes)) end
        end

        local INTEGERS = { b = true, B = true, h = true, H = true, l = true, L = true, T = true, i = true, I = true }

        local struct = {}

        function struct.pack(...)
          local count = select("#", ...)
          local fmt = checkformat("pack", count, (...))
          local h = { endian = NATIVE, align = 1 }
          local parts = {}
          local arg = 2
          local totalsize = 0
          local i = 1
          local length = #fmt
          while i <= length do
            local opt = string_sub(fmt, i, i)
            i = i + 1
            local size
            size, i = optsize(opt, fmt, i, 0)
            local toalign = gettoalign(totalsize, h.align, opt, size)
            totalsize = totalsize + toalign
            if toalign > 0 then parts[#parts + 1] = string.rep("\0", toalign) end
            if INTEGERS[opt] then
              local n = checknumber("pack", arg, count, (select(arg, ...)), 0)
              arg = arg + 1
              putinteger(parts, tobits(n), h.endian, size)
            elseif opt == "x" then
              parts[#parts + 1] = "\0"
            elseif opt == "f" or opt == "d" then
              local n = checknumber("pack", arg, count, (select(arg, ...)), 0)
              arg = arg + 1
              parts[#parts + 1] = string_pack((h.endian == BIG and ">" or "<") .. opt, n)
            elseif opt == "c" or opt == "s" then
              local s = (select(arg, ...))
              if type(s) == "number" then s = tostring(s) end
              if type(s) ~= "string" then
                argerror("pack", arg, "string expected, got " .. typename(arg, count + 1, s))
              end
              arg = arg + 1
              local l = #s
              if size == 0 then size = l end
              -- struct checks after advancing: the message names the argument after the string
              if l < size then argerror("pack", arg, "string too short") end
              parts[#parts + 1] = string_sub(s, 1, size)
              if opt == "s" then
                parts[#parts + 1] = "\0"
                size = size + 1
              end
            else
              i = controloptions("pack", opt, fmt, i, h, 0)
            end
            totalsize = totalsize + size
          end
          return table_concat(parts)
        end

        -- getinteger: the unsigned 64-bit accumulation of struct (bytes past the 8th shift out),
        -- then sign extension from bit size*8-1 (x86 masks that shift count to 6 bits).
        local function getinteger(data, pos, endian, signed, size)
          local l = 0
          if endian == BIG then
            for k = 1, size do l = (l << 8) | string_byte(data, pos + k) end
          else
            for k = size, 1, -1 do l = (l << 8) | string_byte(data, pos + k) end
          end
          if not signed then
            if l >= 0 then return l + 0.0 end
            return (l >> 11) * 2048.0 + (l & 0x7ff)
          end
          local mask = -1 << ((size * 8 - 1) & 63)
          if l & mask ~= 0 then l = l | mask end
          return l + 0.0
        end

        function struct.unpack(...)
          local count = select("#", ...)
          local fmt = checkformat("unpack", count, (...))
          local data = (select(2, ...))
          if type(data) == "number" then data = tostring(data) end
          if type(data) ~= "string" then
            argerror("unpack", 2, "string expected, got " .. typename(2, count, data))
          end
          local ld = #data
          local start = 1
          if count >= 3 and (select(3, ...)) ~= nil then
            start = tointeger51((select(3, ...)))
            if start == nil then
              argerror("unpack", 3, "number expected, got " .. type((select(3, ...))))
            end
          end
          if start == 0 then argerror("unpack", 3, "offset must be 1 or greater") end
          -- a negative offset is a huge size_t in C: every bounds check fails.
          local negative = start < 0
          local pos = start - 1
          local h = { endian = NATIVE, align = 1 }
          local results = {}
          local i = 1
          local length = #fmt
          while i <= length do
            local opt = string_sub(fmt, i, i)
            i = i + 1
            local size
            size, i = optsize(opt, fmt, i, 0)
            pos = pos + gettoalign(pos, h.align, opt, size)
            if negative or size > ld or pos > ld - size then argerror("unpack", 2, "data string too short") end
            if #results + 3 > 8000 then raise("stack overflow (too many results)") end
            if INTEGERS[opt] then
              local lower = opt == "b" or opt == "h" or opt == "l" or opt == "i"
              results[#results + 1] = number51(getinteger(data, pos, h.endian, lower, size))
            elseif opt == "x" then
              -- padding: nothing to return
            elseif opt == "f" or opt == "d" then
              results[#results + 1] = number51((string_unpack((h.endian == BIG and ">" or "<") .. opt, data, pos + 1)))
            elseif opt == "c" then
              if size == 0 then
                -- lua_isnumber of 5.1: a numeric string (from 'c' or 's') also gives the size
                local previous = tonumber(results[#results])
                if #results == 0 or previous == nil then raise("format 'c0' needs a previous size") end
                results[#results] = nil
                size = previous >= 0 and math_floor(previous) or -1
                if size < 0 or size > ld or pos > ld - size then argerror("unpack", 2, "data string too short") end
              end
              results[#results + 1] = string_sub(data, pos + 1, pos + size)
            elseif opt == "s" then
              local nul = string_find(data, "\0", pos + 1, true)
              if nul == nil then raise("unfinished string in data") end
              size = nul - pos
              results[#results + 1] = string_sub(data, pos + 1, nul - 1)
            else
              i = controloptions("unpack", opt, fmt, i, h, 0)
            end
            pos = pos + size
          end
          results[#results + 1] = negative and start or pos + 1
          return table_unpack(results, 1, #results)
        end

        function struct.size(...)
          local count = select("#", ...)
          local fmt = checkformat("size", count, (...))
          local h = { endian = NATIVE, align = 1 }
          local pos = 0
          local i = 1
          local length = #fmt
          while i <= length do
            local opt = string_sub(fmt, i, i)
            i = i + 1
            local size
            size, i = optsize(opt, fmt, i, 0)
            pos = pos + gettoalign(pos, h.align, opt, size)
            if opt == "s" then
              argerror("size", 1, "option 's' has no fixed size")
            elseif opt == "c" and size == 0 then
              argerror("size", 1, "option 'c0' has no fixed size")
            end
            if not opt:find("^%w$") then i = controloptions("size", opt, fmt, i, h, 0) end
            pos = pos + size
          end
          return pos
        end

        rawset(_ENV, "struct", struct)
        """;

    internal static void Open(KeraLua.Lua lua) => LibraryChunk.Run(lua, "struct", Source);
}
