namespace Diagnostics.Server.Configuration;

/// <summary>
/// The classes client-output-buffer-limit distinguishes, as Redis's CLIENT_TYPE_*: every client is
/// "normal" until it subscribes (pubsub) or becomes a replica. Also what CLIENT LIST / CLIENT KILL
/// TYPE filter on.
/// </summary>
public enum ClientClass
{
    Normal = 0,
    Replica = 1,
    PubSub = 2,
}
