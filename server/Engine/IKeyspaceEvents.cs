namespace Diagnostics.Server.Engine;

/// <summary>
/// Where keyspace events go (notify-keyspace-events): the pub/sub side implements it, the Engine
/// only reports. <see cref="Enabled"/> is one field read, so an event nobody listens to costs that.
/// </summary>
public interface IKeyspaceEvents
{
    bool Enabled(KeyspaceEventTypes type);
    void Notify(KeyspaceEventTypes type, ReadOnlySpan<byte> eventName, ReadOnlySpan<byte> key, int database);
}
