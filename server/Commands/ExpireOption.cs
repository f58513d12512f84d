using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Commands;

/// <summary>The EX / PX / EXAT / PXAT options shared by SET, GETEX and the EXPIRE family.</summary>
public static class ExpireOption
{
    public enum Unit { Seconds, Milliseconds, UnixSeconds, UnixMilliseconds }

    public static bool TryParseUnit(ReadOnlySpan<byte> option, out Unit unit)
    {
        if (NumberFormat.EqualsIgnoreCase(option, "ex"u8)) unit = Unit.Seconds;
        else if (NumberFormat.EqualsIgnoreCase(option, "px"u8)) unit = Unit.Milliseconds;
        else if (NumberFormat.EqualsIgnoreCase(option, "exat"u8)) unit = Unit.UnixSeconds;
        else if (NumberFormat.EqualsIgnoreCase(option, "pxat"u8)) unit = Unit.UnixMilliseconds;
        else
        {
            unit = default;
            return false;
        }
        return true;
    }

    /// <summary>
    /// Reads the time argument at <paramref name="index"/> and turns it into absolute Unix
    /// milliseconds, replying Redis's errors: not an integer, or not positive / overflowing
    /// ("invalid expire time in 'set' command").
    /// </summary>
    public static bool TryResolve(ref CommandContext c, int index, Unit unit, out long expireAt)
    {
        expireAt = 0;
        if (!c.TryInt64(index, out long value))
            return false;
        if (value <= 0 || !TryToAbsolute(value, unit, c.NowMs, out expireAt))
        {
            c.Error(string.Format(Errors.InvalidExpire, c.Spec.FullName));
            return false;
        }
        return true;
    }

    /// <summary>Converts to absolute Unix milliseconds; false on overflow.</summary>
    public static bool TryToAbsolute(long value, Unit unit, long nowMs, out long expireAt)
    {
        expireAt = 0;
        try
        {
            expireAt = unit switch
            {
                Unit.Seconds => checked(value * 1000 + nowMs),
                Unit.Milliseconds => checked(value + nowMs),
                Unit.UnixSeconds => checked(value * 1000),
                _ => value,
            };
            return true;
        }
        catch (OverflowException)
        {
            return false;
        }
    }
}
