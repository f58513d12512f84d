namespace Diagnostics.Server.Commands;

/// <summary>A timeout argument in milliseconds, checked as Redis's getTimeoutFromObjectOrReply checks it (WAIT, CLIENT PAUSE).</summary>
internal static class TimeoutArgument
{
    /// <summary>False, with Redis's error replied, when the argument is not a whole number or is negative.</summary>
    public static bool TryMilliseconds(ref CommandContext c, int index, out long milliseconds)
    {
        if (!Protocol.NumberFormat.TryParseInt64(c.Arg(index), out milliseconds))
        {
            c.Error("ERR timeout is not an integer or out of range");
            return false;
        }
        if (milliseconds < 0)
        {
            c.Error("ERR timeout is negative");
            return false;
        }
        return true;
    }
}
