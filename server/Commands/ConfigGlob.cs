namespace Diagnostics.Server.Commands;

/// <summary>
/// Redis's glob (stringmatchlen) over names, case-insensitive: * ? [abc] [^abc] [a-z] and \x.
/// For CONFIG GET and COMMAND LIST FILTERBY PATTERN, whose subjects are short names; a star
/// backtracks to its last position only, so matching stays O(pattern x text).
/// </summary>
public static class ConfigGlob
{
    public static bool HasWildcards(string pattern) => pattern.AsSpan().IndexOfAny("*?[") >= 0;

    public static bool IsMatch(ReadOnlySpan<char> pattern, ReadOnlySpan<char> text)
    {
        int p = 0, t = 0;
        int starP = -1, starT = 0;
        while (t < text.Length)
        {
            if (p < pattern.Length && pattern[p] == '*')
            {
                while (p < pattern.Length && pattern[p] == '*')
                    p++;
                if (p == pattern.Length)
                    return true;
                starP = p;
                starT = t;
                continue;
            }
            if (p < pattern.Length && MatchOne(pattern, ref p, text[t]))
            {
                t++;
                continue;
            }
            if (starP < 0)
                return false;
            // Let the last star swallow one more character and retry from there.
            p = starP;
            t = ++starT;
        }
        while (p < pattern.Length && pattern[p] == '*')
            p++;
        return p == pattern.Length;
    }

    /// <summary>Matches one pattern element at <paramref name="p"/> against <paramref name="c"/>, advancing past it on success.</summary>
    private static bool MatchOne(ReadOnlySpan<char> pattern, ref int p, char c)
    {
        int i = p;
        bool match;
        switch (pattern[i])
        {
            case '?':
                match = true;
                i++;
                break;
            case '[':
                match = MatchClass(pattern, ref i, c);
                break;
            case '\\' when i + 1 < pattern.Length:
                match = SameLetter(pattern[i + 1], c);
                i += 2;
                break;
            default:
                match = SameLetter(pattern[i], c);
                i++;
                break;
        }
        if (match)
            p = i;
        return match;
    }

    /// <summary>A [...] class starting at <paramref name="i"/>; an unterminated class runs to the pattern's end, as in Redis.</summary>
    private static bool MatchClass(ReadOnlySpan<char> pattern, ref int i, char c)
    {
        i++;
        bool negate = i < pattern.Length && pattern[i] == '^';
        if (negate)
            i++;
        bool match = false;
        while (i < pattern.Length && pattern[i] != ']')
        {
            if (pattern[i] == '\\' && i + 1 < pattern.Length)
            {
                i++;
                match |= pattern[i] == c;
            }
            else if (i + 2 < pattern.Length && pattern[i + 1] == '-')
            {
                char start = char.ToLowerInvariant(pattern[i]), end = char.ToLowerInvariant(pattern[i + 2]);
                if (start > end)
                    (start, end) = (end, start);
                char lower = char.ToLowerInvariant(c);
                match |= lower >= start && lower <= end;
                i += 2;
            }
            else
            {
                match |= SameLetter(pattern[i], c);
            }
            i++;
        }
        if (i < pattern.Length)
            i++; // the closing ']'
        return negate ? !match : match;
    }

    private static bool SameLetter(char a, char b) => a == b || char.ToLowerInvariant(a) == char.ToLowerInvariant(b);
}
