namespace Diagnostics.Server.Commands;

/// <summary>Options of SET (NX XX GET KEEPTTL EX PX EXAT PXAT) and GETEX (EX PX EXAT PXAT PERSIST).</summary>
[Flags]
public enum StringSetFlags
{
    None = 0,
    Nx = 1 << 0,
    Xx = 1 << 1,
    Get = 1 << 2,
    KeepTtl = 1 << 3,
    Persist = 1 << 4,
    Ex = 1 << 5,
    Px = 1 << 6,
    ExAt = 1 << 7,
    PxAt = 1 << 8,
    Expiry = Ex | Px | ExAt | PxAt,
}

/// <summary>
/// Parses SET's and GETEX's options exactly as Redis's parseExtendedStringArgumentsOrReply does,
/// including its quirks: an option may repeat ("EX 1 EX 2" keeps the last time), only conflicting
/// ones are a syntax error, and the time is validated after the whole line parsed, so a conflict
/// after a bad time still reports "syntax error".
/// </summary>
public static class StringSetOptions
{
    /// <param name="first">Index of the first option (3 for SET, 2 for GETEX).</param>
    /// <param name="forSet">True for SET's options, false for GETEX's.</param>
    /// <param name="expireIndex">Index of the time argument of the last EX/PX/EXAT/PXAT, or 0.</param>
    public static bool TryParse(ref CommandContext c, int first, bool forSet, out StringSetFlags flags, out int expireIndex)
    {
        flags = StringSetFlags.None;
        expireIndex = 0;
        for (int i = first; i < c.ArgCount; i++)
        {
            bool hasNext = i + 1 < c.ArgCount;
            StringSetFlags expiry = StringSetFlags.None;
            if (forSet && c.ArgIs(i, "nx"u8) && (flags & StringSetFlags.Xx) == 0)
                flags |= StringSetFlags.Nx;
            else if (forSet && c.ArgIs(i, "xx"u8) && (flags & StringSetFlags.Nx) == 0)
                flags |= StringSetFlags.Xx;
            else if (forSet && c.ArgIs(i, "get"u8))
                flags |= StringSetFlags.Get;
            else if (forSet && c.ArgIs(i, "keepttl"u8) && (flags & (StringSetFlags.Persist | StringSetFlags.Expiry)) == 0)
                flags |= StringSetFlags.KeepTtl;
            else if (!forSet && c.ArgIs(i, "persist"u8) && (flags & (StringSetFlags.KeepTtl | StringSetFlags.Expiry)) == 0)
                flags |= StringSetFlags.Persist;
            else if (hasNext && (expiry = ExpiryOf(ref c, i)) != StringSetFlags.None
                // The same unit may repeat; a different one, KEEPTTL or PERSIST conflicts.
                && (flags & (StringSetFlags.KeepTtl | StringSetFlags.Persist | (StringSetFlags.Expiry & ~expiry))) == 0)
            {
                flags |= expiry;
                expireIndex = ++i;
            }
            else
            {
                c.SyntaxError();
                return false;
            }
        }
        return true;
    }

    private static StringSetFlags ExpiryOf(ref CommandContext c, int index)
    {
        if (!ExpireOption.TryParseUnit(c.Arg(index), out var unit))
            return StringSetFlags.None;
        return unit switch
        {
            ExpireOption.Unit.Seconds => StringSetFlags.Ex,
            ExpireOption.Unit.Milliseconds => StringSetFlags.Px,
            ExpireOption.Unit.UnixSeconds => StringSetFlags.ExAt,
            _ => StringSetFlags.PxAt,
        };
    }

    /// <summary>
    /// Turns the parsed time into absolute Unix milliseconds (0 when no time was given), replying
    /// Redis's error when it is not an integer, not positive or overflows.
    /// </summary>
    public static bool TryResolveExpire(ref CommandContext c, StringSetFlags flags, int expireIndex, out long expireAt)
    {
        expireAt = 0;
        if (expireIndex == 0)
            return true;
        var unit = (flags & StringSetFlags.Expiry) switch
        {
            StringSetFlags.Ex => ExpireOption.Unit.Seconds,
            StringSetFlags.Px => ExpireOption.Unit.Milliseconds,
            StringSetFlags.ExAt => ExpireOption.Unit.UnixSeconds,
            _ => ExpireOption.Unit.UnixMilliseconds,
        };
        return ExpireOption.TryResolve(ref c, expireIndex, unit, out expireAt);
    }
}
