using Diagnostics.Server.DataTypes;
using System.Globalization;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Network;
using Diagnostics.Server.Protocol;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>
/// DEBUG SLEEP / SET-ACTIVE-EXPIRE / OBJECT / RELOAD / LOADAOF / DIGEST / DIGEST-VALUE / HELP.
/// DEBUG parks every shard (AllShards), so DEBUG SLEEP makes the whole server busy as it does in
/// Redis, DEBUG OBJECT reads any key and DEBUG DIGEST sees the whole keyspace at one instant.
/// Allowed according to enable-debug-command.
/// </summary>
public static unsafe class DebugCommands
{
    public const string NotAllowedError = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.";

    public static void Register(CommandTable table)
    {
        table.Add(new CommandSpec("debug", -2, Admin | NoScript | Loading | Stale | AllShards, 0, 0, 0, Debug, "server",
            "A container for debugging commands.", "1.0.0", "Depends on subcommand."));
    }

    private static void Debug(ref CommandContext c)
    {
        if (!ProtectedAction.Allowed(c.Server.Config.EnableDebugCommand, c.Client))
        {
            c.Error(NotAllowedError);
            return;
        }
        if (c.ArgIs(1, "help"u8) && c.ArgCount == 2)
            Help(ref c);
        else if (c.ArgIs(1, "sleep"u8) && c.ArgCount == 3)
            Sleep(ref c);
        else if (c.ArgIs(1, "set-active-expire"u8) && c.ArgCount == 3)
            SetActiveExpire(ref c);
        else if (c.ArgIs(1, "object"u8) && c.ArgCount == 3)
            Object(ref c);
        else if (c.ArgIs(1, "reload"u8))
            Reload(ref c);
        else if (c.ArgIs(1, "digest"u8) && c.ArgCount == 2)
            Digest(ref c);
        else if (c.ArgIs(1, "digest-value"u8))
            DigestValue(ref c);
        else if (c.ArgIs(1, "loadaof"u8) && c.ArgCount == 2)
            LoadAof(ref c);
        else
            c.Error($"ERR unknown subcommand or wrong number of arguments for '{Errors.Truncate(c.ArgString(1))}'. Try DEBUG HELP.");
    }

    /// <summary>
    /// DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: the RDB round trip (save, empty memory, load),
    /// with every shard held, as Redis does whether or not the AOF is on.
    /// </summary>
    private static void Reload(ref CommandContext c)
    {
        bool flush = true, save = true;
        for (int i = 2; i < c.ArgCount; i++)
        {
            if (c.ArgIs(i, "merge"u8) || c.ArgIs(i, "noflush"u8))
                flush = false;
            else if (c.ArgIs(i, "nosave"u8))
                save = false;
            else
            {
                c.Error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
                return;
            }
        }
        if (c.Server.Rdb.ReloadHoldingAllShards(save, flush) is { } error)
            c.Error(error);
        else
            c.Reply.Ok();
    }

    /// <summary>DEBUG LOADAOF: makes the AOF durable, empties memory and loads the AOF back.</summary>
    private static void LoadAof(ref CommandContext c)
    {
        if (c.Server.Aof.Reload() is { } error)
            c.Error(error);
        else
            c.Reply.Ok();
    }

    /// <summary>The dataset's digest in hex, as redis-server computes it, so two servers' datasets compare by one line.</summary>
    private static void Digest(ref CommandContext c)
    {
        Span<byte> digest = stackalloc byte[DatasetDigest.Size];
        DatasetDigest.Compute(c.Keyspace, digest);
        Span<byte> hex = stackalloc byte[2 * DatasetDigest.Size];
        DatasetDigest.WriteHex(digest, hex);
        c.Reply.SimpleString(hex);
    }

    /// <summary>
    /// Each named key's value digest (zeros for a missing key), in the selected database. Keys
    /// whose TTL passed are still read, not expired: Redis looks them up in the dict directly.
    /// </summary>
    private static void DigestValue(ref CommandContext c)
    {
        Span<byte> digest = stackalloc byte[DatasetDigest.Size];
        Span<byte> hex = stackalloc byte[2 * DatasetDigest.Size];
        c.Reply.ArrayHeader(c.ArgCount - 2);
        for (int i = 2; i < c.ArgCount; i++)
        {
            var key = c.Arg(i);
            Entry* e = c.Database(key, out uint hash).Keys.Find(key, hash);
            if (e == null)
            {
                c.Reply.SimpleString(DatasetDigest.ZeroHex);
                continue;
            }
            digest.Clear();
            DatasetDigest.Value(e, digest);
            DatasetDigest.WriteHex(digest, hex);
            c.Reply.SimpleString(hex);
        }
    }

    /// <summary>Blocks for the given seconds (fractions allowed; unparsable means 0, as Redis's strtod).</summary>
    private static void Sleep(ref CommandContext c)
    {
        if (NumberFormat.TryParseDouble(c.Arg(2), out double seconds) && seconds > 0)
            Thread.Sleep(TimeSpan.FromSeconds(Math.Min(seconds, int.MaxValue / 1000.0)));
        c.Reply.Ok();
    }

    private static void SetActiveExpire(ref CommandContext c)
    {
        // Redis reads the flag with atoi: any non-zero number enables, anything else disables.
        c.Server.Keyspace.Cron.ActiveExpireEnabled = NumberFormat.TryParseInt64(c.Arg(2), out long on) && on != 0;
        c.Reply.Ok();
    }

    /// <summary>Redis's one-line description of a key's value; reading it neither touches the key nor counts as a hit.</summary>
    private static void Object(ref CommandContext c)
    {
        var key = c.Arg(2);
        var db = c.Database(key, out uint hash);
        Entry* e = db.Lookup(key, hash, c.ExpireClockMs);
        if (e == null)
        {
            c.Error(Errors.NoSuchKey);
            return;
        }
        string encoding = System.Text.Encoding.ASCII.GetString(ValueEncoding.Of(e));
        long serialized = e->Type == Engine.ValueType.List ? ListSerializedLength(ref c, e) : ValueEncoding.SerializedLength(e);
        string text = string.Create(CultureInfo.InvariantCulture,
            $"Value at:0x{(ulong)e:x} refcount:1 encoding:{encoding} serializedlength:{serialized} lru:{LruClock.SecondsOf(e->AccessClock)} lru_seconds_idle:{LruClock.IdleSeconds(e->AccessClock)}");
        if (e->Type == Engine.ValueType.List)
            text += QuicklistFields(Values.List(e));
        c.Reply.SimpleString(text);
    }

    /// <summary>
    /// rdbSavedObjectLen of a list: its nodes as the RDB writes them, LZF-compressed when
    /// rdbcompression is on, as Redis measures them (by serializing).
    /// </summary>
    private static long ListSerializedLength(ref CommandContext c, Entry* e)
    {
        using var writer = new Persistence.RdbWriter(Persistence.RdbWriteOptions.From(c.Server.Config));
        writer.WriteValue(e);
        return writer.Length - 1; // without the type byte
    }

    /// <summary>What Redis 7.0's DEBUG OBJECT adds for a quicklist: nodes, average elements per node, the fill, whether compression is on, the nodes' bytes.</summary>
    private static string QuicklistFields(ListValue* list)
        => string.Create(CultureInfo.InvariantCulture,
            $" ql_nodes:{list->NodeCount} ql_avg_node:{(double)list->Count / list->NodeCount:F2} ql_listpack_max:{list->Fill} ql_compressed:{(list->CompressDepth != 0 ? 1 : 0)} ql_uncompressed_size:{list->NodeBytes}");

    private static void Help(ref CommandContext c)
    {
        string[] lines =
        [
            "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "DIGEST", "    Output a hex signature representing the current DB content.",
            "DIGEST-VALUE <key> [<key> ...]", "    Output a hex signature of the values of all the specified keys.",
            "OBJECT <key>", "    Show low level info about `key` and associated value.",
            "LOADAOF", "    Flush the AOF buffers on disk and reload the AOF in memory.",
            "RELOAD [option ...]", "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
            "    * MERGE: conflicting keys will be loaded from RDB.",
            "    * NOFLUSH: the existing database will not be removed before load, but",
            "      conflicting keys will generate an exception and kill the server.",
            "    * NOSAVE: the database will be loaded from an existing RDB file.",
            "    Examples:",
            "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
            "      the database.",
            "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
            "      existing RDB file.",
            "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
            "      file to the database.",
            "SET-ACTIVE-EXPIRE <0|1>", "    Setting it to 0 disables expiring keys in background when they are not",
            "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the", "    default.",
            "SLEEP <seconds>", "    Stop the server for <seconds>. Decimals allowed.",
            "HELP", "    Prints this help.",
        ];
        HelpReply.Write(c.Reply, lines);
    }
}
