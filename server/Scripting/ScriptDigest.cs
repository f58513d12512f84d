using System.Security.Cryptography;

namespace Diagnostics.Server.Scripting;

/// <summary>
/// A script's SHA1, the name EVALSHA and SCRIPT EXISTS use, held as its 20 bytes so looking a
/// script up allocates nothing (the 40 hex digits a client sends are parsed, in either case).
/// </summary>
internal readonly struct ScriptDigest : IEquatable<ScriptDigest>
{
    private readonly ulong _a;
    private readonly ulong _b;
    private readonly uint _c;

    private ScriptDigest(ReadOnlySpan<byte> digest)
    {
        _a = BitConverter.ToUInt64(digest);
        _b = BitConverter.ToUInt64(digest[8..]);
        _c = BitConverter.ToUInt32(digest[16..]);
    }

    public static ScriptDigest Of(ReadOnlySpan<byte> body)
    {
        Span<byte> digest = stackalloc byte[20];
        SHA1.HashData(body, digest);
        return new ScriptDigest(digest);
    }

    /// <summary>Parses 40 hex digits; false for anything else (EVALSHA then answers NOSCRIPT).</summary>
    public static bool TryParse(ReadOnlySpan<byte> hex, out ScriptDigest digest)
    {
        digest = default;
        if (hex.Length != 40)
            return false;
        Span<byte> bytes = stackalloc byte[20];
        for (int i = 0; i < 20; i++)
        {
            int high = HexValue(hex[2 * i]), low = HexValue(hex[2 * i + 1]);
            if (high < 0 || low < 0)
                return false;
            bytes[i] = (byte)(high << 4 | low);
        }
        digest = new ScriptDigest(bytes);
        return true;
    }

    private static int HexValue(byte c) => c switch
    {
        >= (byte)'0' and <= (byte)'9' => c - '0',
        >= (byte)'a' and <= (byte)'f' => c - 'a' + 10,
        >= (byte)'A' and <= (byte)'F' => c - 'A' + 10,
        _ => -1,
    };

    /// <summary>40 lowercase hex digits of <paramref name="digest"/> into <paramref name="hex"/>.</summary>
    public static void ToHex(ReadOnlySpan<byte> digest, Span<byte> hex)
    {
        const string Digits = "0123456789abcdef";
        for (int i = 0; i < digest.Length; i++)
        {
            hex[2 * i] = (byte)Digits[digest[i] >> 4];
            hex[2 * i + 1] = (byte)Digits[digest[i] & 0xF];
        }
    }

    public override string ToString()
    {
        Span<byte> bytes = stackalloc byte[20];
        BitConverter.TryWriteBytes(bytes, _a);
        BitConverter.TryWriteBytes(bytes[8..], _b);
        BitConverter.TryWriteBytes(bytes[16..], _c);
        Span<byte> hex = stackalloc byte[40];
        ToHex(bytes, hex);
        return System.Text.Encoding.ASCII.GetString(hex);
    }

    public bool Equals(ScriptDigest other) => _a == other._a && _b == other._b && _c == other._c;
    public override bool Equals(object? obj) => obj is ScriptDigest other && Equals(other);
    public override int GetHashCode() => (int)_a ^ (int)(_a >> 32);
}
