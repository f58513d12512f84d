using System.Diagnostics;
using System.Security.Cryptography;
using Diagnostics.Server.Commands;
using Diagnostics.Server.Execution;
using Diagnostics.Server.Protocol;
using Diagnostics.Server.Scripting.Lua;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Scripting;

/// <summary>
/// The script in progress on one VM (Redis's scriptRunCtx): who called it, what it may do (read
/// only, allowed over maxmemory), what it did (wrote, chose RESP3, turned propagation off), when
/// it started, and whether SCRIPT KILL asked it to stop. It serves the redis library's C# half:
/// <see cref="Call"/> runs a command through the executor for the script's client and hands the
/// reply back as a Lua value. One per VM, reused run after run.
/// </summary>
internal sealed unsafe class ScriptRun : IDisposable
{
    private readonly DataServer _server;
    private readonly ScriptClient _client;
    private readonly RequestBatch _arguments = new();
    private readonly RequestBatch _command = new();
    private int _commandLength;
    // Where a script's writes go while redis.set_repl has the AOF off: written, then dropped.
    private readonly Persistence.AofRecordBuffer _unlogged = new();
    private Persistence.AofRecordBuffer? _log;
    private long _started;
    private volatile bool _killRequested;
    private bool _mayGiveBack;

    private readonly ScriptEngine _engine;

    public ScriptRun(DataServer server, ScriptEngine engine)
    {
        _server = server;
        _engine = engine;
        _client = ScriptClient.For(server, engine.Log);
    }

    public ILogger Log => _engine.Log;
    /// <summary>What error texts and stats call it: the sha, or the function's name.</summary>
    public string Name { get; private set; } = "";
    /// <summary>Run by EVAL (SCRIPT KILL's business), not FCALL (FUNCTION KILL's).</summary>
    public bool IsEval { get; private set; }
    public ClientSession? Caller { get; private set; }
    public bool ReadOnly { get; private set; }
    public bool AllowOom { get; private set; }
    /// <summary>A script without a shebang (Redis's eval compatibility mode): memory is checked per write.</summary>
    public bool CompatMode { get; private set; }
    /// <summary>A write command ran: the script can no longer be killed (its effects would be half applied).</summary>
    public bool Wrote { get; private set; }
    /// <summary>Commands the script ran that wrote to the AOF's buffer.</summary>
    public int LoggedCommands { get; private set; }
    /// <summary>redis.setresp: the protocol of the replies the script's commands give it.</summary>
    public int Resp => _client.Reply.Protocol;
    public bool Busy { get; private set; }
    public bool KillRequested => _killRequested;

    // What a script giving itself back is stopped with; no client sees it, as the run is dropped.
    private const string GivingBackError = "ERR Script stopped to run again off the socket thread";

    public void Begin(ClientSession caller, CompiledScript script, bool isEval, bool readOnly, bool allowOom, bool compatMode,
        Persistence.AofRecordBuffer? log, long startedTimestamp, bool mayGiveBack)
    {
        Caller = caller;
        Script = script;
        Name = script.Name;
        IsEval = isEval;
        ReadOnly = readOnly;
        AllowOom = allowOom;
        CompatMode = compatMode;
        Wrote = false;
        LoggedCommands = 0;
        Busy = false;
        Aborted = false;
        _killRequested = false;
        _mayGiveBack = mayGiveBack;
        GivingBack = false;
        _log = log;
        _client.Lend(caller, log);
        _client.Log = _engine.Log;
        _commandLength = 0;
        BusyCommand = null;
        _started = startedTimestamp;
    }

    /// <summary>The script or function running.</summary>
    public CompiledScript? Script { get; private set; }

    /// <summary>
    /// Keeps the FCALL that started the run (FUNCTION STATS shows it while the function is busy):
    /// copied into a reused arena, turned into arrays only if the function turns busy.
    /// </summary>
    public void RememberCommand(ArgList args)
    {
        _command.Clear();
        _command.BeginCommand(args.Count);
        for (int i = 0; i < args.Count; i++)
            _command.AddArg(args[i]);
        _command.EndCommand();
        _commandLength = args.Count;
    }

    /// <summary>The command that started a busy run (FCALL's), as FUNCTION STATS reports it; null before it turns busy.</summary>
    public byte[][]? BusyCommand { get; private set; }

    public void End()
    {
        // Stopped (killed, giving back) no more: the hook is re-armed next, and would otherwise
        // stop the re-arming itself, leaving a hook on every line for every script after.
        _killRequested = false;
        GivingBack = false;
        _mayGiveBack = false;
        _client.Return();
        _unlogged.Clear();
        Caller = null;
        _log = null;
    }

    /// <summary>SCRIPT KILL / FUNCTION KILL: the next hook check stops the script.</summary>
    public void RequestKill() => _killRequested = true;

    /// <summary>SHUTDOWN NOSAVE: stops the script even after it wrote; its writes never reach the AOF.</summary>
    public void Abort()
    {
        Aborted = true;
        _killRequested = true;
    }

    /// <summary>
    /// Stopping to run again elsewhere: it ran past the socket thread's budget before writing
    /// anything (see ScriptEngine.SocketThreadBudgetMs). Stopped as a kill is, and no command it
    /// tries from now on runs, so it ends having changed nothing.
    /// </summary>
    public bool GivingBack { get; private set; }

    /// <summary>Stopped for SHUTDOWN NOSAVE: what it wrote is not logged.</summary>
    public bool Aborted { get; private set; }

    public double ElapsedMs => Stopwatch.GetElapsedTime(_started).TotalMilliseconds;

    // ---- redis.call / redis.pcall ------------------------------------------------------------

    /// <summary>
    /// The C# half of redis.call and redis.pcall: converts the arguments, applies the script rules
    /// (unknown command, arity, noscript, writes from a read-only script, memory), runs the command
    /// and pushes its reply. Pushes the reply (1 result) or an {err=} table and true (2 results):
    /// the Lua wrapper raises it for redis.call and returns it for redis.pcall.
    /// </summary>
    public int Call(IntPtr lua)
    {
        int argc = LuaApi.GetTop(lua);
        if (GivingBack)
            return Fail(lua, GivingBackError);
        if (argc == 0)
            return Fail(lua, "ERR Please specify at least one argument for this redis lib call");
        _arguments.Clear();
        _arguments.BeginCommand(argc);
        Span<byte> number = stackalloc byte[32];
        for (int i = 1; i <= argc; i++)
        {
            int type = LuaApi.Type(lua, i);
            if (type == LuaApi.TypeString)
            {
                _arguments.AddArg(LuaApi.ToBytes(lua, i));
            }
            else if (type == LuaApi.TypeNumber)
            {
                // Redis formats numbers itself (%.17g): Lua's own text would lose precision.
                int length = LuaApi.IsInteger(lua, i) != 0
                    ? FormatInteger(LuaApi.ToIntegerX(lua, i, null), number)
                    : Libraries.CNumberText.FormatG(LuaApi.ToNumberX(lua, i, null), 17, number);
                _arguments.AddArg(number[..length]);
            }
            else
            {
                _arguments.EndCommand();
                return Fail(lua, "ERR Lua redis lib command arguments must be strings or integers");
            }
        }
        _arguments.EndCommand();
        ArgList args = _arguments[0];
        var executor = _server.Executor;
        CommandSpec? spec = executor.Find(args);
        // A container (CLIENT, CONFIG) found without its subcommand is unknown, as Redis's lookup says.
        if (spec is null || (spec.Handler is null && args.Count >= 2))
            return Fail(lua, "ERR Unknown Redis command called from script");
        if (!spec.AcceptsArgCount(args.Count) || spec.Handler is null)
            return Fail(lua, "ERR Wrong number of args calling Redis command from script");
        if ((spec.Flags & CommandFlags.NoScript) != 0)
            return Fail(lua, "ERR This Redis command is not allowed from script");
        if (spec.IsWrite)
        {
            if (ReadOnly)
                return Fail(lua, "ERR Write commands are not allowed from read-only scripts.");
            if (_server.Aof.WriteError is { } diskError)
                return Fail(lua, "MISCONF Errors writing to the AOF file: " + diskError);
        }
        // Over maxmemory, a script that did not declare allow-oom may not run a command that adds
        // memory (a shebang script was refused before it started).
        if (CompatMode && !AllowOom && (spec.Flags & CommandFlags.DenyOom) != 0 && _server.Keyspace.Eviction.MaxMemory != 0
            && _server.Keyspace.Eviction.IsOverLimit)
            return Fail(lua, Errors.OutOfMemory);

        var output = _client.Output;
        output.Reset();
        var logBefore = _log?.Save() ?? default;
        executor.Execute(_client, args, spec);
        _client.Reply.Commit();
        // The command's in-flight entry ended with it: the script is what this thread is running.
        if (Caller is { } caller && Script is { } script)
            Diagnostics.Threads.ThreadCounters.Current.InFlight.Begin(script.Activity, caller.Id, caller.DatabaseIndex, _started);
        if (spec.IsWrite)
        {
            Wrote = true;
            if (_log is not null && _client.LoggedWrites == _log && _log.Length != logBefore.Length)
                LoggedCommands++;
            _unlogged.Clear();
        }
        ReadOnlySpan<byte> reply = output.Written;
        if (!reply.IsEmpty && reply[0] == (byte)'-')
        {
            ReplyToLua.Push(lua, reply, 0);
            LuaApi.PushBoolean(lua, 1);
            return 2;
        }
        if (ReplyToLua.Push(lua, reply, 0) < 0)
            Log.LogError("A script's command {Command} wrote a reply the script could not read", spec.FullName);
        return 1;
    }


    // ---- the rest of the redis library ---------------------------------------------------------

    /// <summary>redis.sha1hex(s): the SHA1 of the string, 40 lowercase hex digits.</summary>
    public static int Sha1Hex(IntPtr lua)
    {
        if (LuaApi.GetTop(lua) != 1)
            return Fail(lua, "ERR wrong number of arguments");
        ReadOnlySpan<byte> text = LuaApi.ToBytes(lua, 1);
        Span<byte> digest = stackalloc byte[20];
        SHA1.HashData(text, digest);
        Span<byte> hex = stackalloc byte[40];
        ScriptDigest.ToHex(digest, hex);
        LuaApi.PushBytes(lua, hex);
        return 1;
    }

    /// <summary>redis.log(level, message...): to the server's log.</summary>
    public int LogMessage(IntPtr lua)
    {
        int argc = LuaApi.GetTop(lua);
        if (argc < 2)
            return Fail(lua, "ERR redis.log() requires two arguments or more.");
        if (LuaApi.Type(lua, 1) != LuaApi.TypeNumber)
            return Fail(lua, "ERR First argument must be a number (log level).");
        long level = LuaApi.ToIntegerX(lua, 1, null);
        if (level is < 0 or > 3)
            return Fail(lua, "ERR Invalid debug level.");
        var text = new System.Text.StringBuilder();
        for (int i = 2; i <= argc; i++)
        {
            if (i > 2)
                text.Append(' ');
            text.Append(System.Text.Encoding.UTF8.GetString(LuaApi.ToBytes(lua, i)));
        }
        var logLevel = level switch { 0 => LogLevel.Debug, 1 => LogLevel.Information, 2 => LogLevel.Information, _ => LogLevel.Warning };
        Log.Log(logLevel, "Script {Script}: {Message}", Name, text.ToString());
        return 0;
    }

    /// <summary>redis.setresp(2|3): the protocol the script's commands answer it in.</summary>
    public int SetResp(IntPtr lua)
    {
        if (LuaApi.GetTop(lua) != 1)
            return Fail(lua, "ERR redis.setresp() requires one argument.");
        long resp = LuaApi.Type(lua, 1) == LuaApi.TypeNumber ? LuaApi.ToIntegerX(lua, 1, null) : 0;
        if (resp is not (2 or 3))
            return Fail(lua, "ERR RESP version must be 2 or 3.");
        _client.Reply.Protocol = (int)resp;
        return 0;
    }

    /// <summary>redis.set_repl(flags): whether the script's next writes reach the AOF (REPL_AOF) — replicas come later.</summary>
    public int SetRepl(IntPtr lua)
    {
        if (LuaApi.GetTop(lua) != 1)
            return Fail(lua, "ERR redis.set_repl() requires one argument.");
        long flags = LuaApi.Type(lua, 1) == LuaApi.TypeNumber ? LuaApi.ToIntegerX(lua, 1, null) : -1;
        if (flags is < 0 or > 3)
            return Fail(lua, "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
        if (_log is not null)
            _client.LoggedWrites = (flags & 1) != 0 ? _log : _unlogged;
        return 0;
    }

    /// <summary>redis.acl_check_cmd(command, args...): whether the caller may run it (every known command, until ACLs come).</summary>
    public int AclCheckCmd(IntPtr lua)
    {
        if (LuaApi.GetTop(lua) < 1)
            return Fail(lua, "ERR Please specify at least one argument for this redis lib call");
        ReadOnlySpan<byte> name = LuaApi.ToBytes(lua, 1);
        if (_server.Commands.Find(name) is null)
            return Fail(lua, "ERR Invalid command passed to redis.acl_check_cmd()");
        LuaApi.PushBoolean(lua, 1);
        return 1;
    }

    /// <summary>
    /// The failure of a library call: an {err=} table and true, which the Lua wrapper raises
    /// (redis.call) or returns (redis.pcall).
    /// </summary>
    private static int Fail(IntPtr lua, string message)
    {
        LuaApi.CreateTable(lua, 0, 1);
        LuaApi.PushBytes(lua, "err"u8);
        PushString(lua, message);
        LuaApi.RawSet(lua, -3);
        LuaApi.PushBoolean(lua, 1);
        return 2;
    }

    /// <summary>
    /// The busy hook's question, every 100,000 instructions: past busy-reply-threshold the script
    /// is marked busy (other clients get BUSY); returns the kill error text once SCRIPT KILL asked.
    /// </summary>
    public int CheckBusy(IntPtr lua, ScriptEngine engine)
    {
        if (_mayGiveBack && !Wrote && !GivingBack && ElapsedMs >= ScriptEngine.SocketThreadBudgetMs)
            GivingBack = true;
        if (GivingBack)
        {
            PushString(lua, GivingBackError);
            return 1;
        }
        if (!Busy && ElapsedMs >= _server.Config.BusyReplyThresholdMs)
        {
            if (_commandLength > 0)
            {
                ArgList command = _command[0];
                var copy = new byte[command.Count][];
                for (int i = 0; i < copy.Length; i++)
                    copy[i] = command[i].ToArray();
                BusyCommand = copy;
            }
            Busy = true;
            engine.MarkBusy(this);
        }
        if (Busy)
        {
            // Commands that reached a shard this script holds before it turned busy get BUSY now.
            foreach (var shard in _server.Keyspace.Shards)
                shard.AnswerHandOffsWhileBusy();
            _server.Keyspace.Gate.AnswerHandOffsWhileBusy();
        }
        if (_killRequested)
        {
            PushString(lua, IsEval ? "ERR Script killed by user with SCRIPT KILL..." : "ERR Script killed by user with FUNCTION KILL...");
            return 1;
        }
        return 0;
    }

    private static void PushString(IntPtr lua, string text)
    {
        Span<byte> bytes = stackalloc byte[System.Text.Encoding.UTF8.GetMaxByteCount(text.Length)];
        int n = System.Text.Encoding.UTF8.GetBytes(text, bytes);
        LuaApi.PushBytes(lua, bytes[..n]);
    }

    private static int FormatInteger(long value, Span<byte> target)
    {
        System.Buffers.Text.Utf8Formatter.TryFormat(value, target, out int written);
        return written;
    }

    public void Dispose()
    {
        _client.Dispose();
        _arguments.Dispose();
        _command.Dispose();
        _unlogged.Dispose();
    }
}
