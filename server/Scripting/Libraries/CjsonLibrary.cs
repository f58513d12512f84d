using System.Buffers;
using System.Runtime.CompilerServices;
using KeraLua;
using static Diagnostics.Server.Scripting.Libraries.LuaApi;

namespace Diagnostics.Server.Scripting.Libraries;

/// <summary>
/// The global <c>cjson</c> table: Lua CJSON 2.1.0 as Redis 7 bundles it (encode, decode, null,
/// new, the encode_*/decode_* settings, _NAME, _VERSION). Settings live per instance in the Lua
/// half (cjson.new() makes another) and reach the C# encoder and decoder as arguments.
///
/// Both directions are hand-written rather than System.Text.Json's, because scripts see where they
/// differ: Utf8JsonWriter escapes differently (cjson writes "\/", passes bytes >= 0x80 through
/// unvalidated, escapes DEL) and formats numbers differently (cjson: %.14g); Utf8JsonReader
/// rejects what cjson accepts (invalid UTF-8, hex, inf/nan, "+1", leading zeros, trailing "1.")
/// and its errors are not cjson's "Expected X but found Y at character N", which scripts match on.
/// </summary>
internal static class CjsonLibrary
{
    // Lua holds pointers to these delegates' thunks: they must live as long as the process.
    private static readonly LuaFunction EncodeFunction = Encode;
    private static readonly LuaFunction DecodeFunction = Decode;

    /// <summary>LUAI_MAXCSTACK of Redis's Lua 5.1, which lua_checkstack enforces on cjson's nesting (see CmsgpackLibrary).</summary>
    private const int Lua51StackLimit = 8000;

    private const string Source = """
        local raw_encode, raw_decode = ...
        local _, null = raw_decode("null", 1, true)   -- the NULL lightuserdata

        -- json_integer_option / json_enum_option (depth 1: called from the setting function).
        local function integer_option(name, i, value, current, min, max)
          if value == nil then return current end
          local n = tointeger51(value)
          if n == nil then argerror(name, i, "number expected, got " .. type(value), 1) end
          n = toint32(n)
          -- cjson names argument 1 whichever argument it checks
          if n < min or n > max then argerror(name, 1, string_format("expected integer between %d and %d", min, max), 1) end
          return n
        end
        local BOOLEAN_OPTIONS = { "off", "on" }
        local function enum_option(name, i, value, current, options)
          if value ~= nil then
            if type(value) == "boolean" then
              current = value and 1 or 0
            else
              if type(value) == "number" then value = tostring(number51(value)) end
              if type(value) ~= "string" then argerror(name, i, "string expected, got " .. type(value), 1) end
              local found
              for k = 1, #options do if options[k] == value then found = k - 1 end end
              if found == nil then argerror(name, i, "invalid option '" .. value .. "'", 1) end
              current = found
            end
          end
          return current
        end
        local function enum_result(setting, options)
          if setting == 0 or setting == 1 then return setting == 1 end
          return options[setting + 1]
        end
        local function arg_init(name, count, max)
          if count > max then argerror(name, max + 1, "found too many arguments", 1) end
        end

        local new
        new = function()
          local cfg = {
            sparse_convert = 0, sparse_ratio = 2, sparse_safe = 10,
            encode_max_depth = 1000, decode_max_depth = 1000,
            encode_invalid_numbers = 0, decode_invalid_numbers = 1,
            encode_keep_buffer = 1, encode_number_precision = 14,
          }
          local cjson = { null = null, _NAME = "cjson", _VERSION = "2.1.0", new = new }

          function cjson.encode(...)
            if select("#", ...) ~= 1 then argerror("encode", 1, "expected 1 argument") end
            local ok, json = raw_encode((...), cfg.encode_number_precision, cfg.encode_max_depth,
              cfg.sparse_convert, cfg.sparse_ratio, cfg.sparse_safe, cfg.encode_invalid_numbers)
            if not ok then raise(json) end
            return json
          end

          function cjson.decode(...)
            if select("#", ...) ~= 1 then argerror("decode", 1, "expected 1 argument") end
            local s = ...
            if type(s) == "number" then
              s = tostring(number51(s))
            elseif type(s) ~= "string" then
              argerror("decode", 1, "string expected, got " .. type(s))
            end
            local ok, value = raw_decode(s, cfg.decode_max_depth, cfg.decode_invalid_numbers ~= 0)
            if not ok then raise(value) end
            return value
          end

          function cjson.encode_sparse_array(...)
            local count = select("#", ...)
            arg_init("encode_sparse_array", count, 3)
            local convert, ratio, safe = ...
            cfg.sparse_convert = enum_option("encode_sparse_array", 1, convert, cfg.sparse_convert, BOOLEAN_OPTIONS)
            cfg.sparse_ratio = integer_option("encode_sparse_array", 2, ratio, cfg.sparse_ratio, 0, 0x7fffffff)
            cfg.sparse_safe = integer_option("encode_sparse_array", 3, safe, cfg.sparse_safe, 0, 0x7fffffff)
            return enum_result(cfg.sparse_convert, BOOLEAN_OPTIONS), cfg.sparse_ratio, cfg.sparse_safe
          end

          function cjson.encode_max_depth(...)
            arg_init("encode_max_depth", select("#", ...), 1)
            cfg.encode_max_depth = integer_option("encode_max_depth", 1, (...), cfg.encode_max_depth, 1, 0x7fffffff)
            return cfg.encode_max_depth
          end

          function cjson.decode_max_depth(...)
            arg_init("decode_max_depth", select("#", ...), 1)
            cfg.decode_max_depth = integer_option("decode_max_depth", 1, (...), cfg.decode_max_depth, 1, 0x7fffffff)
            return cfg.decode_max_depth
          end

          function cjson.encode_number_precision(...)
            arg_init("encode_number_precision", select("#", ...), 1)
            cfg.encode_number_precision = integer_option("encode_number_precision", 1, (...), cfg.encode_number_precision, 1, 14)
            return cfg.encode_number_precision
          end

          -- Kept for compatibility: the C# encoder always builds into a pooled buffer.
          function cjson.encode_keep_buffer(...)
            arg_init("encode_keep_buffer", select("#", ...), 1)
            cfg.encode_keep_buffer = enum_option("encode_keep_buffer", 1, (...), cfg.encode_keep_buffer, BOOLEAN_OPTIONS)
            return enum_result(cfg.encode_keep_buffer, BOOLEAN_OPTIONS)
          end

          local INVALID_NUMBER_OPTIONS = { "off", "on", "null" }
          function cjson.encode_invalid_numbers(...)
            arg_init("encode_invalid_numbers", select("#", ...), 1)
            cfg.encode_invalid_numbers = enum_option("encode_invalid_numbers", 1, (...), cfg.encode_invalid_numbers, INVALID_NUMBER_OPTIONS)
            return enum_result(cfg.encode_invalid_numbers, INVALID_NUMBER_OPTIONS)
          end

          function cjson.decode_invalid_numbers(...)
            arg_init("decode_invalid_numbers", select("#", ...), 1)
            cfg.decode_invalid_numbers = enum_option("decode_invalid_numbers", 1, (...), cfg.decode_invalid_numbers, BOOLEAN_OPTIONS)
            return enum_result(cfg.decode_invalid_numbers, BOOLEAN_OPTIONS)
          end

          return cjson
        end

        rawset(_ENV, "cjson", new())
        """;

    internal static void Open(KeraLua.Lua lua) => LibraryChunk.Run(lua, "cjson", Source, EncodeFunction, DecodeFunction);

    private static int Fail(IntPtr l, string message)
    {
        lua_settop(l, 0);
        lua_pushboolean(l, 0);
        PushString(l, message);
        return 2;
    }

    /// <summary>A failure that unwinds the C# encoder or decoder to its entry point, where it becomes (false, message).</summary>
    private sealed class CjsonError(string message) : Exception(message);

    // ---- encode ----------------------------------------------------------------------------

    private struct EncodeSettings
    {
        public int Precision;
        public int MaxDepth;
        public bool SparseConvert;
        public int SparseRatio;
        public int SparseSafe;
        public int InvalidNumbers;   // 0 refuse, 1 write inf/nan, 2 write null
        public int Used;             // stack slots Lua 5.1 would hold
    }

    /// <summary>raw_encode(value, precision, max_depth, sparse_convert, sparse_ratio, sparse_safe, invalid_numbers).</summary>
    private static int Encode(IntPtr l)
    {
        var output = new PooledBytes(256);
        try
        {
            var settings = new EncodeSettings
            {
                Precision = (int)ToInteger(l, 2),
                MaxDepth = (int)ToInteger(l, 3),
                SparseConvert = ToInteger(l, 4) != 0,
                SparseRatio = (int)ToInteger(l, 5),
                SparseSafe = (int)ToInteger(l, 6),
                InvalidNumbers = (int)ToInteger(l, 7),
                Used = 1,
            };
            lua_settop(l, 1);
            AppendValue(l, ref settings, 0, ref output);
            lua_settop(l, 0);
            lua_pushboolean(l, 1);
            PushBytes(l, output.Written);
            return 2;
        }
        catch (Exception e)
        {
            return Fail(l, e.Message);
        }
        finally
        {
            output.Dispose();
        }
    }

    /// <summary>json_append_data: the value on top of the stack (left there).</summary>
    private static void AppendValue(IntPtr l, ref EncodeSettings settings, int depth, ref PooledBytes output)
    {
        switch (lua_type(l, -1))
        {
            case TypeString:
                AppendString(ToBytes(l, -1), ref output);
                break;
            case TypeNumber:
                AppendNumber(ToNumber(l, -1), ref settings, ref output);
                break;
            case TypeBoolean:
                output.Append(lua_toboolean(l, -1) != 0 ? "true"u8 : "false"u8);
                break;
            case TypeTable:
                depth++;
                // json_check_encode_depth: the depth setting, or 5.1's lua_checkstack(3).
                if (depth > settings.MaxDepth || settings.Used + 3 > Lua51StackLimit
                    || lua_checkstack(l, 3) == 0 || !RuntimeHelpers.TryEnsureSufficientExecutionStack())
                    throw new CjsonError($"Cannot serialise, excessive nesting ({depth})");
                int length = ArrayLength(l, ref settings);
                if (length > 0)
                    AppendArray(l, ref settings, depth, length, ref output);
                else
                    AppendObject(l, ref settings, depth, ref output);
                break;
            case TypeNil:
                output.Append("null"u8);
                break;
            case TypeLightUserData when lua_touserdata(l, -1) == IntPtr.Zero:
                output.Append("null"u8);
                break;
            default:
                throw new CjsonError($"Cannot serialise {TypeName(lua_type(l, -1))}: type not supported");
        }
    }

    /// <summary>lua_typename of Lua 5.1 for the types cjson can refuse.</summary>
    private static string TypeName(int type) => type switch
    {
        TypeNil => "nil",
        TypeBoolean => "boolean",
        TypeLightUserData => "userdata",
        TypeNumber => "number",
        TypeString => "string",
        TypeTable => "table",
        6 => "function",
        7 => "userdata",
        8 => "thread",
        _ => "no value",
    };

    /// <summary>
    /// lua_array_length: the largest key when every key is a whole number >= 1, else -1 (an
    /// object). max is a C int assigned from a double: beyond int's range x86 stores INT_MIN.
    /// Too sparse (max > items * ratio and max > safe) is an error, or an object when converting.
    /// </summary>
    private static int ArrayLength(IntPtr l, ref EncodeSettings settings)
    {
        int max = 0, items = 0;
        lua_pushnil(l);
        while (lua_next(l, -2) != 0)
        {
            double k;
            if (lua_type(l, -2) == TypeNumber && (k = ToNumber(l, -2)) != 0 && Math.Floor(k) == k && k >= 1)
            {
                if (k > max)
                    max = k <= int.MaxValue ? (int)k : int.MinValue;
                items++;
                Pop(l, 1);
                continue;
            }
            Pop(l, 2);
            return -1;
        }
        if (settings.SparseRatio > 0 && max > unchecked(items * settings.SparseRatio) && max > settings.SparseSafe)
        {
            if (!settings.SparseConvert)
                throw new CjsonError("Cannot serialise table: excessively sparse array");
            return -1;
        }
        return max;
    }

    private static void AppendArray(IntPtr l, ref EncodeSettings settings, int depth, int length, ref PooledBytes output)
    {
        output.Append((byte)'[');
        for (int i = 1; i <= length; i++)
        {
            if (i > 1)
                output.Append((byte)',');
            lua_rawgeti(l, -1, i);
            settings.Used++;
            AppendValue(l, ref settings, depth, ref output);
            Pop(l, 1);
            settings.Used--;
        }
        output.Append((byte)']');
    }

    private static void AppendObject(IntPtr l, ref EncodeSettings settings, int depth, ref PooledBytes output)
    {
        output.Append((byte)'{');
        bool comma = false;
        lua_pushnil(l);
        settings.Used++;
        while (lua_next(l, -2) != 0)
        {
            settings.Used++;
            if (comma)
                output.Append((byte)',');
            else
                comma = true;
            int keyType = lua_type(l, -2);
            if (keyType == TypeNumber)
            {
                output.Append((byte)'"');
                AppendNumber(ToNumber(l, -2), ref settings, ref output);
                output.Append("\":"u8);
            }
            else if (keyType == TypeString)
            {
                AppendString(ToBytes(l, -2), ref output);
                output.Append((byte)':');
            }
            else
                throw new CjsonError($"Cannot serialise {TypeName(keyType)}: table key must be a number or string");
            AppendValue(l, ref settings, depth, ref output);
            Pop(l, 1);
            settings.Used--;
        }
        settings.Used--;
        output.Append((byte)'}');
    }

    private static void AppendNumber(double value, ref EncodeSettings settings, ref PooledBytes output)
    {
        if (settings.InvalidNumbers == 0)
        {
            if (double.IsInfinity(value) || double.IsNaN(value))
                throw new CjsonError("Cannot serialise number: must not be NaN or Inf");
        }
        else if (settings.InvalidNumbers == 1)
        {
            if (double.IsNaN(value))
            {
                output.Append("nan"u8);   // never "-nan"
                return;
            }
        }
        else if (double.IsInfinity(value) || double.IsNaN(value))
        {
            output.Append("null"u8);
            return;
        }
        int written = CNumberText.FormatG(value, settings.Precision, output.Reserve(32));
        output.Advance(written);
    }

    /// <summary>
    /// cjson's char2escape: the JSON escapes plus "\/", \u00XX for other control bytes and for
    /// DEL; every other byte, including invalid UTF-8, is copied as it is.
    /// </summary>
    private static void AppendString(ReadOnlySpan<byte> text, ref PooledBytes output)
    {
        output.Append((byte)'"');
        int run = 0;
        for (int i = 0; i < text.Length; i++)
        {
            byte c = text[i];
            if (c >= 0x20 && c != '"' && c != '\\' && c != '/' && c != 0x7f)
                continue;
            output.Append(text[run..i]);
            run = i + 1;
            switch (c)
            {
                case (byte)'"': output.Append("\\\""u8); break;
                case (byte)'\\': output.Append("\\\\"u8); break;
                case (byte)'/': output.Append("\\/"u8); break;
                case (byte)'\b': output.Append("\\b"u8); break;
                case (byte)'\t': output.Append("\\t"u8); break;
                case (byte)'\n': output.Append("\\n"u8); break;
                case (byte)'\f': output.Append("\\f"u8); break;
                case (byte)'\r': output.Append("\\r"u8); break;
                default:
                    var escape = output.Reserve(6);
                    "\\u00"u8.CopyTo(escape);
                    escape[4] = HexDigit(c >> 4);
                    escape[5] = HexDigit(c & 15);
                    output.Advance(6);
                    break;
            }
        }
        output.Append(text[run..]);
        output.Append((byte)'"');
    }

    private static byte HexDigit(int value) => (byte)(value < 10 ? '0' + value : 'a' + value - 10);

    // ---- decode ----------------------------------------------------------------------------

    /// <summary>raw_decode(s, max_depth, invalid_numbers): true and the value, or false and cjson's message.</summary>
    private static int Decode(IntPtr l)
    {
        byte[]? scratch = null;
        try
        {
            int maxDepth = (int)ToInteger(l, 2);
            bool invalidNumbers = lua_toboolean(l, 3) != 0;
            lua_settop(l, 1);   // the string stays at 1, anchoring the bytes the parser reads
            ReadOnlySpan<byte> json = ToBytes(l, 1);
            if (json.Length >= 2 && (json[0] == 0 || json[1] == 0))
                return Fail(l, "JSON parser does not support UTF-16 or UTF-32");
            scratch = ArrayPool<byte>.Shared.Rent(Math.Max(json.Length, 16));
            var parser = new JsonParser(l, json, scratch, maxDepth, invalidNumbers);
            parser.ParseDocument();
            lua_pushboolean(l, 1);   // string, value, true
            lua_copy(l, -1, 1);      // true, value, true
            lua_settop(l, 2);
            return 2;
        }
        catch (Exception e)
        {
            return Fail(l, e.Message);
        }
        finally
        {
            if (scratch is not null)
                ArrayPool<byte>.Shared.Return(scratch);
        }
    }

    private enum TokenType { ObjectBegin, ObjectEnd, ArrayBegin, ArrayEnd, String, Number, Boolean, Null, Colon, Comma, End, Whitespace, Error, Unknown }

    private static readonly string[] TokenNames =
        ["T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING", "T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END", "T_WHITESPACE", "T_ERROR", "T_UNKNOWN"];

    private struct Token
    {
        public TokenType Type;
        public int Index;
        public string? Error;
        public double Number;
        public bool Boolean;
        public int StringLength;   // in the parser's scratch buffer
    }

    /// <summary>cjson's tokenizer and recursive descent over the string's bytes, pushing values onto the Lua stack.</summary>
    private ref struct JsonParser
    {
        private readonly IntPtr _l;
        private readonly ReadOnlySpan<byte> _json;
        private readonly byte[] _scratch;
        private readonly int _maxDepth;
        private readonly bool _invalidNumbers;
        private int _position;
        private int _depth;
        private int _used;   // stack slots Lua 5.1 would hold: the string, then tables and pending keys

        public JsonParser(IntPtr l, ReadOnlySpan<byte> json, byte[] scratch, int maxDepth, bool invalidNumbers)
        {
            _l = l;
            _json = json;
            _scratch = scratch;
            _maxDepth = maxDepth;
            _invalidNumbers = invalidNumbers;
            _used = 1;
        }

        /// <summary>The byte at <paramref name="i"/>, NUL past the end (cjson reads a C string).</summary>
        private readonly byte At(int i) => i < _json.Length ? _json[i] : (byte)0;

        public void ParseDocument()
        {
            var token = new Token();
            NextToken(ref token);
            ProcessValue(ref token);
            NextToken(ref token);
            if (token.Type != TokenType.End)
                Throw("the end", ref token);
        }

        private static TokenType Classify(byte c) => c switch
        {
            (byte)'{' => TokenType.ObjectBegin,
            (byte)'}' => TokenType.ObjectEnd,
            (byte)'[' => TokenType.ArrayBegin,
            (byte)']' => TokenType.ArrayEnd,
            (byte)',' => TokenType.Comma,
            (byte)':' => TokenType.Colon,
            0 => TokenType.End,
            (byte)' ' or (byte)'\t' or (byte)'\n' or (byte)'\r' => TokenType.Whitespace,
            (byte)'f' or (byte)'i' or (byte)'I' or (byte)'n' or (byte)'N' or (byte)'t' or (byte)'"' or (byte)'+' or (byte)'-' => TokenType.Unknown,
            >= (byte)'0' and <= (byte)'9' => TokenType.Unknown,
            _ => TokenType.Error,
        };

        private void SetError(ref Token token, string error)
        {
            token.Type = TokenType.Error;
            token.Index = _position;
            token.Error = error;
        }

        private void NextToken(ref Token token)
        {
            byte c;
            while (true)
            {
                c = At(_position);
                token.Type = Classify(c);
                if (token.Type != TokenType.Whitespace)
                    break;
                _position++;
            }
            token.Index = _position;
            if (token.Type == TokenType.Error)
            {
                SetError(ref token, "invalid token");
                return;
            }
            if (token.Type == TokenType.End)
                return;
            if (token.Type != TokenType.Unknown)
            {
                _position++;
                return;
            }
            if (c == '"')
            {
                NextString(ref token);
                return;
            }
            if (c == '-' || (c >= '0' && c <= '9'))
            {
                if (!_invalidNumbers && IsInvalidNumber())
                {
                    SetError(ref token, "invalid number");
                    return;
                }
                NextNumber(ref token);
                return;
            }
            if (Matches("true"u8))
            {
                token.Type = TokenType.Boolean;
                token.Boolean = true;
                _position += 4;
                return;
            }
            if (Matches("false"u8))
            {
                token.Type = TokenType.Boolean;
                token.Boolean = false;
                _position += 5;
                return;
            }
            if (Matches("null"u8))
            {
                token.Type = TokenType.Null;
                _position += 4;
                return;
            }
            if (_invalidNumbers && IsInvalidNumber())
            {
                NextNumber(ref token);
                return;
            }
            SetError(ref token, "invalid token");
        }

        private readonly bool Matches(ReadOnlySpan<byte> word)
        {
            for (int k = 0; k < word.Length; k++)
            {
                if (At(_position + k) != word[k])
                    return false;
            }
            return true;
        }

        /// <summary>json_is_invalid_number: what strtod takes but strict JSON does not (+, hex, leading zeros, inf, nan).</summary>
        private readonly bool IsInvalidNumber()
        {
            int p = _position;
            if (At(p) == '+')
                return true;
            if (At(p) == '-')
                p++;
            if (At(p) == '0')
            {
                byte next = At(p + 1);
                return (next | 0x20) == 'x' || (next >= '0' && next <= '9');
            }
            if (At(p) <= '9')
                return false;
            return MatchesIgnoringCase(p, "inf"u8) || MatchesIgnoringCase(p, "nan"u8);
        }

        private readonly bool MatchesIgnoringCase(int p, ReadOnlySpan<byte> lowercase)
        {
            for (int k = 0; k < lowercase.Length; k++)
            {
                if ((At(p + k) | 0x20) != lowercase[k])
                    return false;
            }
            return true;
        }

        private void NextNumber(ref Token token)
        {
            token.Type = TokenType.Number;
            int end = CNumberText.ParseStrtod(_json, _position, out token.Number);
            if (end == _position)
                SetError(ref token, "invalid number");
            else
                _position = end;
        }

        private void NextString(ref Token token)
        {
            _position++;   // the opening quote
            int length = 0;
            byte c;
            while ((c = At(_position)) != '"')
            {
                if (c == 0)
                {
                    SetError(ref token, "unexpected end of string");
                    return;
                }
                if (c == '\\')
                {
                    byte escaped = At(_position + 1);
                    byte translated = escaped switch
                    {
                        (byte)'"' => (byte)'"',
                        (byte)'\\' => (byte)'\\',
                        (byte)'/' => (byte)'/',
                        (byte)'b' => (byte)'\b',
                        (byte)'t' => (byte)'\t',
                        (byte)'n' => (byte)'\n',
                        (byte)'f' => (byte)'\f',
                        (byte)'r' => (byte)'\r',
                        (byte)'u' => (byte)'u',
                        _ => 0,
                    };
                    if (translated == 'u')
                    {
                        if (AppendUnicodeEscape(ref length))
                            continue;
                        SetError(ref token, "invalid unicode escape code");
                        return;
                    }
                    if (translated == 0)
                    {
                        SetError(ref token, "invalid escape code");
                        return;
                    }
                    _position++;
                    c = translated;
                }
                _scratch[length++] = c;
                _position++;
            }
            _position++;   // the closing quote
            token.Type = TokenType.String;
            token.StringLength = length;
        }

        private readonly int Hex4(int p)
        {
            int value = 0;
            for (int k = 0; k < 4; k++)
            {
                byte c = At(p + k);
                int digit = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
                if (digit < 0)
                    return -1;
                value = (value << 4) | digit;
            }
            return value;
        }

        /// <summary>\uXXXX (or a surrogate pair of them) at the position, as UTF-8 into the scratch buffer.</summary>
        private bool AppendUnicodeEscape(ref int length)
        {
            int codepoint = Hex4(_position + 2);
            int escapeLength = 6;
            if (codepoint < 0)
                return false;
            if ((codepoint & 0xF800) == 0xD800)
            {
                if ((codepoint & 0x400) != 0)
                    return false;   // a low surrogate first
                if (At(_position + 6) != '\\' || At(_position + 7) != 'u')
                    return false;
                int low = Hex4(_position + 8);
                if (low < 0 || (low & 0xFC00) != 0xDC00)
                    return false;
                codepoint = (((codepoint & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000;
                escapeLength = 12;
            }
            if (codepoint <= 0x7F)
                _scratch[length++] = (byte)codepoint;
            else if (codepoint <= 0x7FF)
            {
                _scratch[length++] = (byte)((codepoint >> 6) | 0xC0);
                _scratch[length++] = (byte)((codepoint & 0x3F) | 0x80);
            }
            else if (codepoint <= 0xFFFF)
            {
                _scratch[length++] = (byte)((codepoint >> 12) | 0xE0);
                _scratch[length++] = (byte)(((codepoint >> 6) & 0x3F) | 0x80);
                _scratch[length++] = (byte)((codepoint & 0x3F) | 0x80);
            }
            else
            {
                _scratch[length++] = (byte)((codepoint >> 18) | 0xF0);
                _scratch[length++] = (byte)(((codepoint >> 12) & 0x3F) | 0x80);
                _scratch[length++] = (byte)(((codepoint >> 6) & 0x3F) | 0x80);
                _scratch[length++] = (byte)((codepoint & 0x3F) | 0x80);
            }
            _position += escapeLength;
            return true;
        }

        private static void Throw(string expected, ref Token token)
        {
            string found = token.Type == TokenType.Error ? token.Error! : TokenNames[(int)token.Type];
            throw new CjsonError($"Expected {expected} but found {found} at character {token.Index + 1}");
        }

        /// <summary>json_decode_descend: the depth setting, or 5.1's lua_checkstack(slots).</summary>
        private void Descend(int slots)
        {
            _depth++;
            if (_depth <= _maxDepth && _used + slots <= Lua51StackLimit
                && lua_checkstack(_l, slots) != 0 && RuntimeHelpers.TryEnsureSufficientExecutionStack())
                return;
            throw new CjsonError($"Found too many nested data structures ({_depth}) at character {_position}");
        }

        private void ProcessValue(ref Token token)
        {
            switch (token.Type)
            {
                case TokenType.String:
                    PushBytes(_l, _scratch.AsSpan(0, token.StringLength));
                    break;
                case TokenType.Number:
                    PushNumberAsLua51(_l, token.Number);
                    break;
                case TokenType.Boolean:
                    lua_pushboolean(_l, token.Boolean ? 1 : 0);
                    break;
                case TokenType.ObjectBegin:
                    ParseObject();
                    return;
                case TokenType.ArrayBegin:
                    ParseArray();
                    return;
                case TokenType.Null:
                    lua_pushlightuserdata(_l, IntPtr.Zero);
                    break;
                default:
                    Throw("value", ref token);
                    break;
            }
            _used++;
        }

        private void ParseObject()
        {
            Descend(3);
            lua_createtable(_l, 0, 0);
            _used++;
            var token = new Token();
            NextToken(ref token);
            if (token.Type == TokenType.ObjectEnd)
            {
                _depth--;
                return;
            }
            while (true)
            {
                if (token.Type != TokenType.String)
                    Throw("object key string", ref token);
                PushBytes(_l, _scratch.AsSpan(0, token.StringLength));
                _used++;
                NextToken(ref token);
                if (token.Type != TokenType.Colon)
                    Throw("colon", ref token);
                NextToken(ref token);
                ProcessValue(ref token);
                lua_rawset(_l, -3);
                _used -= 2;
                NextToken(ref token);
                if (token.Type == TokenType.ObjectEnd)
                {
                    _depth--;
                    return;
                }
                if (token.Type != TokenType.Comma)
                    Throw("comma or object end", ref token);
                NextToken(ref token);
            }
        }

        private void ParseArray()
        {
            Descend(2);
            lua_createtable(_l, 0, 0);
            _used++;
            var token = new Token();
            NextToken(ref token);
            if (token.Type == TokenType.ArrayEnd)
            {
                _depth--;
                return;
            }
            for (long i = 1; ; i++)
            {
                ProcessValue(ref token);
                lua_rawseti(_l, -2, i);
                _used--;
                NextToken(ref token);
                if (token.Type == TokenType.ArrayEnd)
                {
                    _depth--;
                    return;
                }
                if (token.Type != TokenType.Comma)
                    Throw("comma or array end", ref token);
                NextToken(ref token);
            }
        }
    }
}
