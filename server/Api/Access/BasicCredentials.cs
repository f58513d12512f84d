using System.Text;

namespace Diagnostics.Server.Api.Access;

/// <summary>
/// RFC 7617's credentials (base64 of user-id ":" password, UTF-8) from an Authorization: Basic
/// header, which anyone can send: bounded before it is decoded, and anything that is not exactly
/// that is no credentials at all. Fuzzed (target http-basic).
/// </summary>
public static class BasicCredentials
{
    /// <summary>The longest encoded credentials read: a user name and password of several hundred bytes each.</summary>
    public const int MaxEncodedLength = 1024;

    private static readonly UTF8Encoding StrictUtf8 = new(false, throwOnInvalidBytes: true);

    /// <summary>The user and password in <paramref name="encoded"/> (the header's value after "Basic "), or null.</summary>
    public static (string User, string Password)? Decode(ReadOnlySpan<char> encoded)
    {
        encoded = encoded.Trim();
        if (encoded.Length > MaxEncodedLength)
            return null;
        Span<byte> bytes = stackalloc byte[MaxEncodedLength];
        if (!Convert.TryFromBase64Chars(encoded, bytes, out int length))
            return null;
        string text;
        try
        {
            text = StrictUtf8.GetString(bytes[..length]);
        }
        catch (DecoderFallbackException)
        {
            return null;
        }
        // The first colon separates them: a password may hold colons, a user-id may not.
        int colon = text.IndexOf(':');
        return colon < 0 ? null : (text[..colon], text[(colon + 1)..]);
    }
}
