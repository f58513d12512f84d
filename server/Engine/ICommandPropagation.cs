namespace Diagnostics.Server.Engine;

/// <summary>
/// Where a command goes as it must be replayed (Redis's propagate(): the AOF today, MONITOR and
/// replicas later): the effective command, not always the one the client sent (SET ... PXAT for
/// SET ... EX; DEL for a key found expired or evicted), one argument at a time.
/// </summary>
public interface ICommandPropagation
{
    void BeginCommand(int database, int argCount);
    void Argument(ReadOnlySpan<byte> value);
    void EndCommand();
}
