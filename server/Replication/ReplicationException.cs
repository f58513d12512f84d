namespace Diagnostics.Server.Replication;

/// <summary>The master answered what the link cannot go on with; the message is Redis's log line for it.</summary>
public sealed class ReplicationException(string message) : Exception(message);
