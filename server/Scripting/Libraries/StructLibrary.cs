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

        local INTEGERS = { b = true, B = true, h = true, H = true, l = true, L = true, T = true, i = true, I = true }
        local SIGNED = { b = true, h = true, l = true, i = true }

        -- A format parsed once into steps (op, size, alignment, endianness per step; control
        -- characters are steps with op "" so unpack still bounds-checks them), then an optional
        -- error where the parse failed: "size" errors (from optsize) come before that option's
        -- alignment and bounds check, "control" errors (from controloptions) after them.
        -- struct's C code parses as it goes; replaying the steps keeps every error in its order.
        local function parse(fmt)
          local plan = { n = 0, op = {}, size = {}, align = {}, big = {} }
          local endian, align = NATIVE, 1
          local i, length = 1, #fmt
          while i <= length do
            local opt = string_sub(fmt, i, i)
            i = i + 1
            local ok, size, j = pcall(optsize, opt, fmt, i, -100)   -- depth -100: the message bare, no position
            if not ok then
              plan.error, plan.phase = size, "size"
              return plan
            end
            i = j
            local known = INTEGERS[opt] or opt == "x" or opt == "f" or opt == "d" or opt == "c" or opt == "s"
            if not known then
              if opt == ">" then endian = BIG
              elseif opt == "<" then endian = LITTLE
              elseif opt == "!" then
                local a
                ok, a, j = pcall(getnum, fmt, i, MAXALIGN, -100)
                if not ok then
                  plan.error, plan.phase = a, "size"
                  return plan
                end
                i = j
                if not (a > 0 and (a & (a - 1)) == 0) then
                  plan.error, plan.phase = string_format("alignment %d is not a power of 2", a), "control"
                  return plan
                end
                align = a
              elseif opt ~= " " then
                plan.error, plan.phase, plan.argument = "invalid format option '" .. opt .. "'", "control", true
                return plan
              end
              opt, size = "", 0
            end
            local n = plan.n + 1
            plan.n = n
            plan.op[n], plan.size[n], plan.align[n], plan.big[n] = opt, size, align, endian == BIG
          end
          return plan
        end

        -- Parsed formats, by format; emptied when scripts build too many distinct ones.
        local plans, planned = {}, 0
        local function planfor(fmt)
          local plan = plans[fmt]
          if plan then return plan end
          plan = parse(fmt)
          if planned >= 512 then plans, planned = {}, 0 end
          plans[fmt] = plan
          planned = planned + 1
          return plan
        end

        -- Raises a plan's parse error as struct did (depth 1: called from the library function).
        local function planerror(name, plan)
          if plan.argument then argerror(name, 1, plan.error, 1) end
          raise(plan.error, 1)
        end

        -- The 64-bit pattern struct's putinteger stores: (unsigned long)(long)n for n < 0, else
        -- (unsigned long)n, with x86-64's results where C leaves the conversion undefined.
        local function tobits(n)
          if math_type(n) == "integer" and n > -0x20000000000000 and n < 0x20000000000000 then return n end
          n = n + 0.0   -- 5.1 numbers are doubles: an integer beyond 2^53 rounds as it would there
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

        local LE, BE, MASK = {}, {}, {}
        for size = 1, 8 do
          LE[size] = size == 8 and "<i8" or "<I" .. size
          BE[size] = size == 8 and ">i8" or ">I" .. size
          MASK[size] = size == 8 and -1 or (1 << (8 * size)) - 1
        end
        local function zeros(n) return string.rep("\0", n) end
        local FLOATS = { [true] = { f = ">f", d = ">d" }, [false] = { f = "<f", d = "<d" } }

        -- size bytes of the 64-bit pattern: bytes past the 8th are zero, as the C shifts leave them.
        local function putinteger(bits, big, size)
          if size == 0 then return "" end
          if size <= 8 then return string_pack(big and BE[size] or LE[size], bits & MASK[size]) end
          if big then return zeros(size - 8) .. string_pack(">i8", bits) end
          return string_pack("<i8", bits) .. zeros(size - 8)
        end

        -- getinteger: the unsigned 64-bit accumulation of struct (only the 8 least significant
        -- bytes survive), then sign extension from bit size*8-1 (x86 masks that shift to 6 bits).
        local function getinteger(data, pos, big, signed, size)
          local l = 0
          if size > 0 then
            if size <= 8 then
              l = string_unpack(big and BE[size] or LE[size], data, pos + 1)
            elseif big then
              l = string_unpack(">i8", data, pos + size - 7)
            else
              l = string_unpack("<i8", data, pos + 1)
            end
          end
          if not signed then
            if l >= 0 then return l + 0.0 end
            return (l >> 11) * 2048.0 + (l & 0x7ff)
          end
          local mask = -1 << ((size * 8 - 1) & 63)
          if l & mask ~= 0 then l = l | mask end
          return l + 0.0
        end

        local struct = {}

        function struct.pack(...)
          local count = select("#", ...)
          local fmt = checkformat("pack", count, (...))
          local plan = planfor(fmt)
          local parts, np = {}, 0
          local arg, total = 2, 0
          local ops, sizes, aligns, bigs = plan.op, plan.size, plan.align, plan.big
          for k = 1, plan.n do
            local opt, size = ops[k], sizes[k]
            if aligns[k] > 1 then   -- with alignment 1 (no '!') there is never padding
              local toalign = gettoalign(total, aligns[k], opt, size)
              if toalign > 0 then
                np = np + 1
                parts[np] = zeros(toalign)
                total = total + toalign
              end
            end
            if INTEGERS[opt] then
              local v = (select(arg, ...))
              local n = tonumber(v)
              -- pack pushes a nil after its arguments, so the first missing one is "nil"
              if n == nil then argerror("pack", arg, "number expected, got " .. typename(arg, count + 1, v)) end
              arg = arg + 1
              np = np + 1
              if size <= 8 and size > 0 and math_type(n) == "integer" and n > -0x20000000000000 and n < 0x20000000000000 then
                parts[np] = string_pack(bigs[k] and BE[size] or LE[size], n & MASK[size])
              else
                parts[np] = putinteger(tobits(n), bigs[k], size)
              end
            elseif opt == "x" then
              np = np + 1
              parts[np] = "\0"
            elseif opt == "f" or opt == "d" then
              local v = (select(arg, ...))
              local n = tonumber(v)
              if n == nil then argerror("pack", arg, "number expected, got " .. typename(arg, count + 1, v)) end
              arg = arg + 1
              np = np + 1
              parts[np] = string_pack(FLOATS[bigs[k]][opt], n)
            elseif opt == "c" or opt == "s" then
              local s = (select(arg, ...))
              if type(s) == "number" then s = tostring(number51(s)) end
              if type(s) ~= "string" then
                argerror("pack", arg, "string expected, got " .. typename(arg, count + 1, s))
              end
              arg = arg + 1
              local l = #s
              if size == 0 then size = l end
              -- struct checks after advancing: the message names the argument after the string
              if l < size then argerror("pack", arg, "string too short") end
              np = np + 1
              parts[np] = size == l and s or string_sub(s, 1, size)
              if opt == "s" then
                np = np + 1
                parts[np] = "\0"
                size = size + 1
              end
            end
            total = total + size
          end
          if plan.error then planerror("pack", plan) end
          return table_concat(parts, "", 1, np)
        end

        function struct.unpack(...)
          local count = select("#", ...)
          local fmt = checkformat("unpack", count, (...))
          local data = (select(2, ...))
          if type(data) == "number" then data = tostring(number51(data)) end
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
          local plan = planfor(fmt)
          local results, nr = {}, 0
          local ops, sizes, aligns, bigs = plan.op, plan.size, plan.align, plan.big
          for k = 1, plan.n do
            local opt, size = ops[k], sizes[k]
            if aligns[k] > 1 then pos = pos + gettoalign(pos, aligns[k], opt, size) end
            if negative or size > ld or pos > ld - size then argerror("unpack", 2, "data string too short") end
            if nr + 3 > 8000 then raise("stack overflow (too many results)") end
            if INTEGERS[opt] then
              nr = nr + 1
              results[nr] = number51(getinteger(data, pos, bigs[k], SIGNED[opt], size))
            elseif opt == "f" or opt == "d" then
              nr = nr + 1
              results[nr] = number51((string_unpack(FLOATS[bigs[k]][opt], data, pos + 1)))
            elseif opt == "c" then
              if size == 0 then
                -- lua_isnumber of 5.1: a numeric string (from 'c' or 's') also gives the size
                local previous = nr > 0 and tonumber(results[nr]) or nil
                if previous == nil then raise("format 'c0' needs a previous size") end
                results[nr] = nil
                nr = nr - 1
                size = previous >= 0 and math_floor(previous) or -1
                if size < 0 or size > ld or pos > ld - size then argerror("unpack", 2, "data string too short") end
              end
              nr = nr + 1
              results[nr] = string_sub(data, pos + 1, pos + size)
            elseif opt == "s" then
              local nul = string_find(data, "\0", pos + 1, true)
              if nul == nil then raise("unfinished string in data") end
              size = nul - pos
              nr = nr + 1
              results[nr] = string_sub(data, pos + 1, nul - 1)
            end
            pos = pos + size
          end
          if plan.error then
            if plan.phase == "control" and negative then argerror("unpack", 2, "data string too short") end
            planerror("unpack", plan)
          end
          nr = nr + 1
          results[nr] = negative and start or pos + 1
          return table_unpack(results, 1, nr)
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
