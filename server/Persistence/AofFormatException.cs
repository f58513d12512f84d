namespace Diagnostics.Server.Persistence;

/// <summary>An append-only file or manifest that cannot be loaded; the message names the file and byte offset.</summary>
public sealed class AofFormatException(string message) : Exception(message);
