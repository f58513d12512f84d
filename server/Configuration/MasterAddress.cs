namespace Diagnostics.Server.Configuration;

/// <summary>The master a replica follows (the replicaof setting): host and port together.</summary>
public sealed record MasterAddress(string Host, int Port);
