using System.Buffers;
using System.Text;
using Diagnostics.Fuzz.Harness;
using Diagnostics.Server;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Diagnostics.Disk;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Persistence;
using Diagnostics.Server.Protocol;
using Microsoft.Extensions.Logging.Abstractions;

namespace Diagnostics.Fuzz.Targets;

/// <summary>
/// The AOF loader on a file in a sandbox folder: RDB preamble detection, annotation lines,
/// MULTI/EXEC blocks, truncated tails (accepted and cut on even-length inputs, refused on odd),
/// replay into a private keyspace as a rewrite does. The same bytes also go through the manifest
/// parser as text. Documented refusals: <see cref="AofFormatException"/>, <see cref="RdbFormatException"/>.
/// Replay runs any command the file names, and some commands allocate by an argument's value
/// (SETRANGE k 536870911 x takes 512 MB in Redis too), so inputs naming a command outside a
/// list of bounded data commands are skipped: the loader is the target, not every handler.
/// </summary>
public sealed class AofTarget : IFuzzTarget
{
    private const string FileName = "fuzz.1.base.aof";

    private static readonly HashSet<string> s_replayable = new(StringComparer.OrdinalIgnoreCase)
    {
        "select", "multi", "exec", "del", "unlink", "flushdb", "flushall", "swapdb", "move", "rename", "renamenx",
        "set", "setnx", "setex", "psetex", "getset", "getdel", "mset", "msetnx", "append", "incr", "incrby", "decr", "decrby", "incrbyfloat",
        "expire", "pexpire", "expireat", "pexpireat", "persist",
        "hset", "hmset", "hsetnx", "hdel", "hincrby", "hincrbyfloat",
        "rpush", "lpush", "rpushx", "lpushx", "lpop", "rpop", "lrem", "lset", "ltrim", "linsert", "lmove", "rpoplpush",
        "sadd", "srem", "smove", "spop",
        "zadd", "zincrby", "zrem", "zremrangebyscore", "zremrangebyrank", "zpopmin", "zpopmax",
    };

    private static readonly ProtocolLimits s_limits = new() { ProtoMaxBulkLength = long.MaxValue, ClientQueryBufferLimit = long.MaxValue };

    private readonly DataServer _server;

    public AofTarget()
    {
        var config = new ServerConfig();
        config.Set("diagnostics-sampler", "no", atStartup: true);
        config.Set("dir", Sandbox.Folder, atStartup: true);
        _server = new DataServer(config);
    }

    public string Name => "aof";

    public void Run(ReadOnlySpan<byte> input)
    {
        try
        {
            AofManifest.Parse(Encoding.UTF8.GetString(input), "fuzz.manifest");
        }
        catch (AofFormatException)
        {
        }

        byte[] data = input.ToArray();
        if (!ReplaysOnlyDataCommands(data))
            return;
        File.WriteAllBytes(Path.Combine(Sandbox.Folder, FileName), data);
        var manifest = new AofManifest { Base = new AofFileInfo(FileName, 1, AofFileType.Base) };
        using var keyspace = new Keyspace(1, _server.Config.Databases, ExecutionMode.Inline, _server.Config.Hz, runCron: false);
        try
        {
            AofLoader.Load(_server, keyspace, Sandbox.Folder, manifest, DiskIoPurpose.LoadRead, NullLogger.Instance,
                allowTruncatedTail: data.Length % 2 == 0);
        }
        catch (Exception ex) when (ex is AofFormatException or RdbFormatException)
        {
        }
        finally
        {
            keyspace.ClearAll();
        }
    }

    /// <summary>Every command the loader could reach is on the bounded list (parsed as the replayer parses).</summary>
    private static bool ReplaysOnlyDataCommands(byte[] data)
    {
        long start = 0;
        if (data.AsSpan().StartsWith("REDIS"u8))
        {
            try
            {
                start = RdbReader.Read(new MemoryStream(data, writable: false), new HashingRdbVisitor());
            }
            catch (RdbFormatException)
            {
                return true; // the load stops in the RDB, before any command
            }
        }
        using var batch = new RequestBatch();
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(data, (int)start, data.Length - (int)start));
        while (!reader.End)
        {
            if (batch.OpenArgsRemaining == 0 && reader.TryPeek(out byte first))
            {
                if (first == (byte)'#')
                {
                    if (!reader.TryAdvanceTo((byte)'\n'))
                        break;
                    continue;
                }
                if (first != (byte)'*')
                    break;
            }
            if (RespRequestParser.TryParse(ref reader, batch, s_limits, authenticated: true, out _) != ParseStatus.Parsed)
                break;
            for (int i = 0; i < batch.CommandCount; i++)
                if (!s_replayable.Contains(Encoding.Latin1.GetString(batch[i][0])))
                    return false;
            batch.Clear();
        }
        return true;
    }
}
