using Diagnostics.Server.Persistence;

namespace Diagnostics.Server.Engine;

/// <summary>
/// Where the deletion of an expired or evicted key is recorded for the AOF, per thread: the buffer
/// of the command or cron pass running on this thread, or null when nothing is logged. Redis logs
/// such deletions as DEL for the same reason: a replay expires nothing (it cannot know the time
/// each command saw) and evicts nothing (memory differs), so a write that found a key expired, or
/// made room by evicting one, must find it deleted on replay too.
/// </summary>
public static class ExpiryLog
{
    [ThreadStatic] private static AofRecordBuffer? t_current;

    public static AofRecordBuffer? Current
    {
        get => t_current;
        set => t_current = value;
    }

    internal static void Record(int database, ReadOnlySpan<byte> key)
    {
        var log = t_current;
        if (log is null)
            return;
        log.BeginCommand(database, 2);
        log.Argument("DEL"u8);
        log.Argument(key);
        log.EndCommand();
    }
}
