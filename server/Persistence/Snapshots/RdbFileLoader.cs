using Diagnostics.Server.Diagnostics.Disk;

namespace Diagnostics.Server.Persistence.Snapshots;

/// <summary>Loads an RDB file into the keyspace (at start, DEBUG RELOAD); the caller holds every shard.</summary>
public static class RdbFileLoader
{
    /// <summary>Returns the keys loaded and the expired keys dropped; throws <see cref="RdbFormatException"/> or <see cref="AofFormatException"/> for a file that cannot be loaded.</summary>
    public static (long Loaded, long Expired) Load(DataServer server, string path, bool dropExpired = true)
    {
        var visitor = new RdbLoadVisitor(server.Keyspace, server.Config) { DropExpiredBefore = dropExpired ? DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() : 0 };
        using var file = DiskFile.OpenRead(path);
        using var stream = new DiskFileStream(file, DiskIoPurpose.LoadRead);
        try
        {
            RdbReader.Read(stream, visitor);
        }
        finally
        {
            visitor.Abandon(); // a value a corrupt file cut short is not left allocated
        }
        if (visitor.FunctionLibraries.Count > 0 && server.Scripts.LoadLibraries(visitor.FunctionLibraries) is { } error)
            throw new RdbFormatException($"a function library in the file cannot be loaded: {error}", 0);
        return (visitor.Keys, visitor.Expired);
    }
}
