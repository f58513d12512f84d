using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// Writes a keyspace as the fewest commands that rebuild it, the content of a base file: per
/// database a SELECT, then per key one command (SET key value, with PXAT when it has a deadline).
/// Keys already past their deadline are left out. The caller holds the keyspace still.
/// </summary>
public static unsafe class KeyspaceDumper
{
    /// <summary>
    /// Dumps <paramref name="keyspace"/> into <paramref name="output"/>; when <paramref name="drain"/>
    /// is given it is called each time the buffer holds more than <paramref name="drainBytes"/>, to
    /// move the bytes to disk and clear the buffer. Returns the number of keys written.
    /// </summary>
    public static long Dump(Keyspace keyspace, long nowMs, AofRecordBuffer output, Action<AofRecordBuffer>? drain = null, int drainBytes = 4 * 1024 * 1024)
    {
        long keys = 0;
        for (int db = 0; db < keyspace.DatabaseCount; db++)
        {
            bool selected = false;
            foreach (var shard in keyspace.Shards)
            {
                Database database = shard.Databases[db];
                if (database.Count == 0)
                    continue;
                if (!selected)
                {
                    output.BeginCommand(db, 2);
                    output.Argument("SELECT"u8);
                    output.Argument(db);
                    output.EndCommand();
                    selected = true;
                }
                var visitor = new DumpVisitor(output, db, nowMs, drain, drainBytes);
                database.Keys.ForEach(ref visitor);
                keys += visitor.Keys;
            }
        }
        return keys;
    }

    private struct DumpVisitor(AofRecordBuffer output, int db, long nowMs, Action<AofRecordBuffer>? drain, int drainBytes) : IEntryVisitor
    {
        public long Keys;

        public void Visit(Entry* e)
        {
            if (e->ExpireAt != 0 && e->ExpireAt <= nowMs)
                return;
            switch (e->Type)
            {
                case Engine.ValueType.String:
                    output.BeginCommand(db, e->ExpireAt != 0 ? 5 : 3);
                    output.Argument("SET"u8);
                    output.Argument(Entry.KeyOf(e));
                    output.Argument(Entry.ValueOf(e));
                    if (e->ExpireAt != 0)
                    {
                        output.Argument("PXAT"u8);
                        output.Argument(e->ExpireAt);
                    }
                    output.EndCommand();
                    break;
                default:
                    throw new InvalidOperationException($"no AOF form for value type {e->Type}");
            }
            Keys++;
            if (drain is not null && output.Length > drainBytes)
                drain(output);
        }
    }
}
