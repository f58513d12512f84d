namespace Diagnostics.Server.Engine;

/// <summary>
/// Redis's glob matching (stringmatchlen) for KEYS, SCAN MATCH and friends: <c>*</c> any run,
/// <c>?</c> one byte, <c>[abc]</c> <c>[^a]</c> <c>[a-z]</c> classes, <c>\x</c> a literal x.
/// Bytes, not characters, and case-sensitive. Two guards keep hostile patterns such as
/// "*a*a*a*a*...b" from taking exponential time: recursion stops at a nesting depth of 1000 (no
/// match), and once the rest of a pattern has failed from every position after a star, earlier
/// stars are not retried with longer runs (Redis 7's skipLongerMatches).
/// </summary>
public static class GlobPattern
{
    private const int MaxNesting = 1000;

    /// <summary>True when the pattern matches every string, so callers can skip matching.</summary>
    public static bool MatchesAll(ReadOnlySpan<byte> pattern) => pattern.Length == 1 && pattern[0] == (byte)'*';

    /// <summary>True when the pattern has any wildcard (so a plain lookup can answer it).</summary>
    public static bool HasWildcards(string pattern) => pattern.AsSpan().IndexOfAny("*?[") >= 0;

    /// <summary>
    /// Case-insensitive match of names (CONFIG GET, COMMAND LIST FILTERBY PATTERN): both sides are
    /// lower-cased, which is Redis's nocase matching for the ASCII names these are.
    /// </summary>
    public static bool IsMatchIgnoringCase(string pattern, string name)
        => IsMatch(System.Text.Encoding.UTF8.GetBytes(pattern.ToLowerInvariant()), System.Text.Encoding.UTF8.GetBytes(name.ToLowerInvariant()));

    public static bool IsMatch(ReadOnlySpan<byte> pattern, ReadOnlySpan<byte> text)
    {
        bool skipLongerMatches = false;
        return Match(pattern, text, ref skipLongerMatches, 0);
    }

    private static bool Match(ReadOnlySpan<byte> pattern, ReadOnlySpan<byte> text, ref bool skipLongerMatches, int nesting)
    {
        if (nesting > MaxNesting)
            return false;
        int p = 0, s = 0;
        while (p < pattern.Length && s < text.Length)
        {
            switch (pattern[p])
            {
                case (byte)'*':
                    while (p + 1 < pattern.Length && pattern[p + 1] == (byte)'*')
                        p++;
                    if (p + 1 == pattern.Length)
                        return true;
                    for (; s < text.Length; s++)
                    {
                        if (Match(pattern[(p + 1)..], text[s..], ref skipLongerMatches, nesting + 1))
                            return true;
                        if (skipLongerMatches)
                            return false;
                    }
                    // The rest of the pattern matches from no position of the rest of the text, so a
                    // longer run for an earlier star cannot help either.
                    skipLongerMatches = true;
                    return false;
                case (byte)'?':
                    s++;
                    break;
                case (byte)'[':
                    p = MatchClass(pattern, p + 1, text[s], out bool matched);
                    if (!matched)
                        return false;
                    s++;
                    break;
                case (byte)'\\':
                    if (p + 1 < pattern.Length)
                        p++;
                    if (pattern[p] != text[s])
                        return false;
                    s++;
                    break;
                default:
                    if (pattern[p] != text[s])
                        return false;
                    s++;
                    break;
            }
            p++;
            if (s == text.Length)
            {
                while (p < pattern.Length && pattern[p] == (byte)'*')
                    p++;
                break;
            }
        }
        return p == pattern.Length && s == text.Length;
    }

    /// <summary>
    /// Matches <paramref name="c"/> against the class starting at <paramref name="p"/> (just after
    /// '['). Returns the index of the closing ']' (or of the last byte when the class is unterminated,
    /// which then simply ends the pattern, as in Redis).
    /// </summary>
    private static int MatchClass(ReadOnlySpan<byte> pattern, int p, byte c, out bool matched)
    {
        bool negate = p < pattern.Length && pattern[p] == (byte)'^';
        if (negate)
            p++;
        bool match = false;
        while (true)
        {
            if (p == pattern.Length)
            {
                p--;
                break;
            }
            byte b = pattern[p];
            if (b == (byte)'\\' && pattern.Length - p >= 2)
            {
                p++;
                if (pattern[p] == c)
                    match = true;
            }
            else if (b == (byte)']')
            {
                break;
            }
            else if (pattern.Length - p >= 3 && pattern[p + 1] == (byte)'-')
            {
                byte start = b, end = pattern[p + 2];
                if (start > end)
                    (start, end) = (end, start);
                p += 2;
                if (c >= start && c <= end)
                    match = true;
            }
            else if (b == c)
            {
                match = true;
            }
            p++;
        }
        matched = negate ? !match : match;
        return p;
    }
}
