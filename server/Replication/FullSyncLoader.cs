using Diagnostics.Server.Persistence;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Replication;

/// <summary>
/// A full sync's load, run with every shard held: the old data and function libraries go, the
/// master's RDB is read from the socket into the keyspace (keys already expired stay: a replica
/// waits for its master's DELs), its libraries are loaded, and for a diskless transfer the EOF
/// mark after the RDB is checked. Loading from the socket, not a temporary file, is Redis's
/// repl-diskless-load: clients wait for the shards meanwhile. A failure empties the keyspace, as
/// Redis does after a failed diskless load, since half a dataset is nobody's.
/// </summary>
internal sealed class FullSyncLoader(DataServer server, MasterLink link, RdbTransferStream stream, byte[]? eofMark, ILogger log)
{
    /// <summary>The load completed (false: the link was stopped or replaced before it began).</summary>
    public bool Done { get; private set; }
    public long Keys { get; private set; }

    public void LoadHoldingAll()
    {
        if (!link.IsCurrent)
            return;
        var keyspace = server.Keyspace;
        var shards = keyspace.Shards;
        // No scope attached: loading raises no keyspace events and logs nothing to the AOF.
        var previous = shards[0].Effects;
        foreach (var shard in shards)
            shard.Effects = null;
        var visitor = new RdbLoadVisitor(keyspace, server.Config);
        try
        {
            log.LogInformation("MASTER <-> REPLICA sync: Flushing old data");
            keyspace.ClearAll();
            server.Scripts.FlushLibraries();
            log.LogInformation("MASTER <-> REPLICA sync: Loading DB in memory");
            RdbReader.Read(stream, visitor);
            if (eofMark is not null)
                CheckEofMark();
            else
                SkipRest();
            if (visitor.FunctionLibraries is { } libraries && server.Scripts.LoadLibraries(libraries) is { } error)
                throw new ReplicationException($"Failed trying to load the MASTER synchronization DB: a function library failed to load: {error}");
            link.ReportTransferred(stream.Transferred);
            Keys = visitor.Keys;
            Done = true;
        }
        catch
        {
            visitor.Abandon();
            keyspace.ClearAll();
            server.Scripts.FlushLibraries();
            throw;
        }
        finally
        {
            foreach (var shard in shards)
                shard.Effects = previous;
        }
    }

    /// <summary>What a length-announced transfer holds past the RDB's own end is not the stream's: skipped.</summary>
    private void SkipRest()
    {
        Span<byte> rest = stackalloc byte[256];
        while (stream.Read(rest) > 0) { }
    }

    /// <summary>Diskless: the 40 bytes after the RDB must be the mark the header announced.</summary>
    private void CheckEofMark()
    {
        Span<byte> mark = stackalloc byte[40];
        int got = 0;
        while (got < mark.Length)
        {
            int n = stream.Read(mark[got..]);
            if (n == 0)
                break;
            got += n;
        }
        if (got != mark.Length || !mark.SequenceEqual(eofMark))
            throw new ReplicationException("Replication stream EOF marker is broken");
    }
}
