using System.Diagnostics;
using System.Text;
using Diagnostics.Server.Commands;
using Diagnostics.Server.Diagnostics.Threads;
using Diagnostics.Server.Execution;
using Diagnostics.Server.Protocol;
using Diagnostics.Server.Scripting.Lua;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Scripting;

/// <summary>
/// Lua scripting for one server (Redis's eval.c and script.c): the VM EVAL's scripts run in, the
/// scripts cached by SHA1 with their calls and time, the script running now (for SCRIPT KILL and
/// the in-flight view) and whether it has run past busy-reply-threshold (other clients then get
/// BUSY). A script runs inside its command's call with every shard held (the command is
/// AllShards), so it is atomic as in Redis, undeclared keys included; the VM itself is entered
/// by one thread at a time, as SCRIPT LOAD may come from anywhere.
/// </summary>
public sealed class ScriptEngine : IDisposable
{
    internal const string BusyEvalError = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
    internal const string BusyFunctionError = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";

    private readonly DataServer _server;
    private readonly Lock _gate = new();
    private readonly ScriptRun _evalRun;
    private LuaVm _evalVm;
    private readonly Dictionary<ScriptDigest, EvalScript> _scripts = [];
    // The cached scripts as diagnostics read them, replaced whole when one is added or all are
    // flushed: INFO and the studio never wait for the gate a long script holds.
    private volatile EvalScript[] _published = [];
    private long _scriptBodyBytes;
    private volatile ScriptRun? _running;
    private volatile ScriptRun? _busy;
    private long _busyTotal;
    private long _killedTotal;
    private long _movedTotal;

    /// <summary>Scripts that ran past busy-reply-threshold since the start.</summary>
    public long BusyTotal => Interlocked.Read(ref _busyTotal);
    /// <summary>Scripts stopped by SCRIPT KILL, FUNCTION KILL or a shutdown.</summary>
    public long KilledTotal => Interlocked.Read(ref _killedTotal);
    /// <summary>Script runs that gave themselves back to run on a pool thread (see <see cref="SocketThreadBudgetMs"/>).</summary>
    public long MovedTotal => Interlocked.Read(ref _movedTotal);
    /// <summary>The last script that kept the server busy, and how long it ran.</summary>
    public string? LastBusyName { get; private set; }
    public long LastBusyMs { get; private set; }

    internal ScriptEngine(DataServer server)
    {
        _server = server;
        _evalRun = new ScriptRun(server, this);
        _evalVm = NewEvalVm();
        _functionRun = new ScriptRun(server, this);
        Functions = new Functions.FunctionStore(this, () => new LuaVm(this, _functionRun, Commands.ConnectionCommands.CompatibleVersion,
            VersionNumber(Commands.ConnectionCommands.CompatibleVersion), forFunctions: true));
    }

    private readonly ScriptRun _functionRun;

    /// <summary>The FUNCTION libraries; change them only through this engine's methods (they take the gate).</summary>
    internal Functions.FunctionStore Functions { get; }

    // ---- FCALL and FUNCTION -------------------------------------------------------------------

    /// <summary>FCALL/FCALL_RO: fed to MONITOR first, as Redis does, then run under the gate.</summary>
    internal void FunctionCall(ref CommandContext c, bool readOnlyCommand)
    {
        if (_server.Monitors.Any && !c.Client.Reprocessing)
            _server.Monitors.Feed(c.Client, c.Client.DatabaseIndex, c.Args, c.Spec, _server.Config);
        lock (_gate)
            Functions.Call(ref c, readOnlyCommand);
    }

    internal string? LoadLibrary(ReadOnlySpan<byte> code, bool replace, out string? error)
    {
        lock (_gate)
            return Functions.Load(code, replace, out error);
    }

    /// <summary>
    /// Loads each library an RDB carried with REPLACE, as Redis's rdbLoad does (at start, DEBUG
    /// RELOAD, a replica's full sync): returns the first error, the libraries before it loaded.
    /// </summary>
    public string? LoadLibraries(IReadOnlyList<byte[]> codes)
    {
        lock (_gate)
        {
            foreach (var code in codes)
                if (Functions.Load(code, replace: true, out string? error) is null)
                    return error;
        }
        return null;
    }

    internal bool DeleteLibrary(string name)
    {
        lock (_gate)
            return Functions.Delete(name);
    }

    internal void FlushLibraries()
    {
        lock (_gate)
            Functions.Flush();
    }

    /// <summary>
    /// FUNCTION RESTORE: the payload's libraries added (APPEND: none may exist yet), replacing
    /// namesakes (REPLACE), or instead of all (FLUSH). Checked whole before anything changes; a
    /// library whose functions collide with another's still fails alone, as in Redis.
    /// </summary>
    internal string? RestoreLibraries(ReadOnlySpan<byte> payload, string policy)
    {
        var codes = new List<byte[]>();
        if (!Scripting.Functions.FunctionDump.TryRead(payload, codes, out string? error))
            return error;
        lock (_gate)
        {
            if (policy == "APPEND")
            {
                foreach (var code in codes)
                {
                    if (Scripting.Functions.LibraryMetadata.TryParse(code, out string name, out _, out _)
                        && Functions.Libraries.Any(l => l.Name == name))
                        return $"ERR Library {name} already exists";
                }
            }
            if (policy == "FLUSH")
                Functions.Flush();
            foreach (var code in codes)
            {
                if (Functions.Load(code, replace: policy != "APPEND", out error) is null)
                    return error;
            }
        }
        return null;
    }

    /// <summary>Where slow scripts and redis.log go; the host sets it.</summary>
    public ILogger Log { get; set; } = Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance;

    private LuaVm NewEvalVm() => new(this, _evalRun, Commands.ConnectionCommands.CompatibleVersion, VersionNumber(Commands.ConnectionCommands.CompatibleVersion), forFunctions: false);

    /// <summary>True while a script has run past busy-reply-threshold: commands without allow-busy are refused.</summary>
    public bool IsBusy => _busy is not null;

    /// <summary>The BUSY error for the script running long now.</summary>
    internal string BusyError => _busy is { IsEval: false } ? BusyFunctionError : BusyEvalError;

    internal void MarkBusy(ScriptRun run)
    {
        _busy = run;
        Interlocked.Increment(ref _busyTotal);
        Log.LogWarning("Slow script detected: still in execution after {Milliseconds} milliseconds. You can try killing the script using the {Command} command. Script name is: {Name}.",
            (long)run.ElapsedMs, run.IsEval ? "SCRIPT KILL" : "FUNCTION KILL", run.Name);
    }

    /// <summary>Bytes the EVAL VM holds (INFO used_memory_vm_eval).</summary>
    public long EvalVmBytes => _evalVm.UsedBytes;
    /// <summary>Bytes of the cached scripts' sources and entries (INFO used_memory_scripts_eval).</summary>
    public long ScriptBytes => Volatile.Read(ref _scriptBodyBytes);
    public int CachedScripts => _published.Length;

    /// <summary>The script running past busy-reply-threshold, or null.</summary>
    internal ScriptRun? BusyRun => _busy;

    /// <summary>The script running now (its name, caller and elapsed time for diagnostics), or null.</summary>
    internal ScriptRun? Running => _running;

    // ---- EVAL, EVALSHA, EVAL_RO, EVALSHA_RO ---------------------------------------------------

    /// <summary>EVAL/EVALSHA[_RO] script|sha numkeys key... arg...: finds or compiles the script and runs it.</summary>
    internal void Eval(ref CommandContext c, bool bySha, bool readOnlyCommand)
    {
        if (!TryKeyCount(ref c, out int numKeys))
            return;
        if (_server.Monitors.Any && !c.Client.Reprocessing)
            _server.Monitors.Feed(c.Client, c.Client.DatabaseIndex, c.Args, c.Spec, _server.Config);
        lock (_gate)
        {
            EvalScript? script;
            if (bySha)
            {
                if (!ScriptDigest.TryParse(c.Arg(1), out var digest) || !_scripts.TryGetValue(digest, out script))
                {
                    c.Error("NOSCRIPT No matching script. Please use EVAL.");
                    return;
                }
            }
            else
            {
                script = FindOrCompile(c.Arg(1), out string? error);
                if (script is null)
                {
                    c.Error(error!);
                    return;
                }
            }
            Run(ref c, script, _evalVm, numKeys, readOnlyCommand);
        }
    }

    private static bool TryKeyCount(ref CommandContext c, out int numKeys)
    {
        numKeys = 0;
        if (!c.TryInt64(2, out long count))
            return false;
        if (count < 0)
        {
            c.Error("ERR Number of keys can't be negative");
            return false;
        }
        if (count > c.ArgCount - 3)
        {
            c.Error("ERR Number of keys can't be greater than number of args");
            return false;
        }
        numKeys = (int)count;
        return true;
    }

    /// <summary>The cached script for <paramref name="body"/>, compiled and cached first when new; null with the error reply text when it does not compile.</summary>
    private EvalScript? FindOrCompile(ReadOnlySpan<byte> body, out string? error)
    {
        var digest = ScriptDigest.Of(body);
        if (_scripts.TryGetValue(digest, out var script))
        {
            error = null;
            return script;
        }
        if (!Shebang.TryParse(body, out var flags, out int shebangLength, out error))
            return null;
        // The shebang line is left out, its newline kept, so line numbers stay the script's own.
        int function = _evalVm.Compile(body[shebangLength..], "@user_script\0"u8, out string? compileError);
        if (function < 0)
        {
            error = "ERR Error compiling script (new function): " + compileError;
            return null;
        }
        script = new EvalScript(digest, digest.ToString(), body.ToArray(), function, flags);
        _scripts.Add(digest, script);
        _published = [.. _published, script];
        Interlocked.Add(ref _scriptBodyBytes, ScriptEntryBytes(script));
        return script;
    }

    private static long ScriptEntryBytes(EvalScript script) => script.Body.Length + 40 + 64;

    /// <summary>
    /// Runs <paramref name="script"/> on <paramref name="vm"/> for the command in <paramref name="c"/>
    /// (the caller holds the gate): an EVAL script sees its keys and arguments as KEYS and ARGV,
    /// a function gets them as its two arguments. Replies with its result or its error, keeps its
    /// stats, and wraps what it wrote in MULTI/EXEC for the AOF.
    /// </summary>
    internal void Run(ref CommandContext c, CompiledScript script, LuaVm vm, int numKeys, bool readOnlyCommand)
    {
        bool mayGiveBack = MayGiveBack(c.Client);
        if (mayGiveBack && !script.RanQuick)
        {
            GiveBack(c.Client);
            return;
        }
        var flags = script.Flags;
        bool isEval = script is EvalScript;
        bool compat = (flags & ScriptFlags.EvalCompat) != 0;
        if (!compat && !CheckDeclaredFlags(ref c, flags, readOnlyCommand))
            return;

        var log = c.Effects.Propagation as Persistence.AofRecordBuffer;
        var logStart = log?.Save() ?? default;
        var run = vm.Run;
        long started = Stopwatch.GetTimestamp();
        run.Begin(c.Client, script, isEval, readOnly: readOnlyCommand || (flags & ScriptFlags.NoWrites) != 0,
            allowOom: (flags & ScriptFlags.AllowOom) != 0, compatMode: compat, log, started, mayGiveBack);
        run.RememberCommand(c.Args);
        // The in-flight view shows the script by name (the executor showed "eval"), from the same start.
        var inFlight = ThreadCounters.Current.InFlight;
        inFlight.Begin(script.Activity, c.Client.Id, c.Client.DatabaseIndex, started);
        IntPtr state = vm.State;
        int top = LuaApi.GetTop(state);
        bool aborted = false;
        _running = run;
        try
        {
            int status;
            if (isEval)
            {
                vm.SetGlobalArray("KEYS"u8, c.Args, 3, numKeys);
                vm.SetGlobalArray("ARGV"u8, c.Args, 3 + numKeys, c.ArgCount - 3 - numKeys);
                status = vm.Call(0, vm.PushForCall(script.Function));
            }
            else
            {
                int handler = vm.PushForCall(script.Function);
                vm.PushArray(c.Args, 3, numKeys);
                vm.PushArray(c.Args, 3 + numKeys, c.ArgCount - 3 - numKeys);
                status = vm.Call(2, handler);
            }
            if (run.GivingBack)
                GiveBack(c.Client);
            else if (status == LuaApi.StatusOk)
                LuaToReply.Write(state, c.Reply, run.Resp);
            else
                ReplyScriptError(ref c, state, script.Name, ref script.Errors);
        }
        finally
        {
            LuaApi.SetTop(state, top);
            // A stopped script left the hook firing on every line.
            bool stopped = run.KillRequested || run.GivingBack;
            aborted = run.Aborted;
            if (run.KillRequested)
                Interlocked.Increment(ref _killedTotal);
            if (run.Busy)
            {
                LastBusyName = run.Name;
                LastBusyMs = (long)run.ElapsedMs;
            }
            _running = null;
            _busy = null;
            run.End();
            if (stopped)
                vm.RearmHook();
        }
        long elapsed = Stopwatch.GetTimestamp() - started;
        if (c.Client.RunElsewhere)
        {
            // Nothing it did counts: it wrote nothing, and runs again from the start elsewhere.
            // (Reads it made ran, and were counted and shown to MONITOR: they run again too.)
            script.RanQuick = false;
            return;
        }
        script.RanQuick = elapsed < SocketThreadBudgetTicks;
        script.Calls++;
        script.Ticks += elapsed;
        if (elapsed > script.MaxTicks)
            script.MaxTicks = elapsed;
        if (log is not null && aborted)
            log.Restore(logStart); // the server is going down without saving: none of it is logged
        else if (log is not null && run.LoggedCommands > 1)
            log.WrapInMultiExec(logStart);
        c.LogNothing();
    }

    /// <summary>
    /// How long a script may run on a socket engine thread. Scripts start on the thread that read
    /// them, as Redis runs them on the one that reads everything; but such a thread also serves
    /// other sockets (the HTTP API's too), which would go unread, SCRIPT KILL included, while a
    /// script ran long there. So a script runs there only when its last run took less than this,
    /// and one that passes it there before writing anything gives itself back: it stops, undone
    /// (it changed nothing), and its connection runs it again from a pool thread. Leaving the
    /// socket thread first for every script cost half of EVALSHA's requests per second at
    /// pipeline 1. A script that wrote and then runs long stays, as it could not be killed anyway.
    /// </summary>
    internal const int SocketThreadBudgetMs = 1;
    private static readonly long SocketThreadBudgetTicks = Stopwatch.Frequency * SocketThreadBudgetMs / 1000;

    /// <summary>Whether a script run for <paramref name="client"/> here may give itself back: not inside EXEC (it cannot be undone there), and only on a socket engine thread (inline mode: every other thread that runs commands is the thread pool's).</summary>
    private bool MayGiveBack(Execution.ClientSession client)
        => _server.Keyspace.Mode == Engine.ExecutionMode.Inline && !client.InTransaction && !client.IsMaster && !Thread.CurrentThread.IsThreadPoolThread;

    /// <summary>The command goes back to its connection unrun, to run again from a pool thread; MONITOR saw it already.</summary>
    private void GiveBack(Execution.ClientSession client)
    {
        Interlocked.Increment(ref _movedTotal);
        client.RunElsewhere = true;
        client.Reprocessing = true;
    }

    /// <summary>The checks Redis makes before a script with a shebang runs (scriptPrepareForRun).</summary>
    private bool CheckDeclaredFlags(ref CommandContext c, ScriptFlags flags, bool readOnlyCommand)
    {
        if ((flags & ScriptFlags.NoWrites) != 0)
            return true;
        var eviction = _server.Keyspace.Eviction;
        if ((flags & ScriptFlags.AllowOom) == 0 && eviction.MaxMemory != 0 && eviction.IsOverLimit)
        {
            c.Error("OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'");
            return false;
        }
        if (_server.Aof.WriteError is { } diskError)
        {
            c.Error("MISCONF Errors writing to the AOF file: " + diskError);
            return false;
        }
        if (readOnlyCommand)
        {
            c.Error("ERR Can not execute a script with write flag using *_ro command.");
            return false;
        }
        return true;
    }

    /// <summary>
    /// The reply for a script that raised: "{err} script: {name}, on {source}:{line}." from the
    /// error handler's table, as Redis composes it.
    /// </summary>
    private static void ReplyScriptError(ref CommandContext c, IntPtr state, string name, ref long errors)
    {
        errors++;
        if (LuaApi.Type(state, -1) != LuaApi.TypeTable)
        {
            string message = LuaApi.Type(state, -1) == LuaApi.TypeString ? Encoding.UTF8.GetString(LuaApi.ToBytes(state, -1)) : "execution failure";
            c.Error($"ERR Error running script {name}, {(message.Length > 100 ? message[..100] : message)}");
            return;
        }
        string text = Field(state, "err"u8) is { } err ? LuaToReply.ErrorText(Encoding.UTF8.GetBytes(err)) : "ERR unknown error";
        string? source = Field(state, "source"u8);
        string? line = Field(state, "line"u8);
        c.Error(source is not null && line is not null ? $"{text} script: {name}, on {source}:{line}." : text);
    }

    private static string? Field(IntPtr state, ReadOnlySpan<byte> name)
    {
        LuaApi.PushBytes(state, name);
        int type = LuaApi.RawGet(state, -2);
        string? value = type is LuaApi.TypeString or LuaApi.TypeNumber ? Encoding.UTF8.GetString(LuaApi.ToBytes(state, -1)) : null;
        LuaApi.Pop(state, 1);
        return value;
    }

    // ---- SCRIPT ----------------------------------------------------------------------------

    /// <summary>SCRIPT LOAD: compiles and caches; the SHA1, or the error reply text.</summary>
    internal string? Load(ReadOnlySpan<byte> body, out string? error)
    {
        lock (_gate)
            return FindOrCompile(body, out error)?.Sha;
    }

    internal bool Exists(ReadOnlySpan<byte> sha)
    {
        lock (_gate)
            return ScriptDigest.TryParse(sha, out var digest) && _scripts.ContainsKey(digest);
    }

    /// <summary>SCRIPT FLUSH: forgets every script and starts a fresh VM, as Redis does.</summary>
    internal void Flush()
    {
        lock (_gate)
        {
            _scripts.Clear();
            _published = [];
            Interlocked.Exchange(ref _scriptBodyBytes, 0);
            var old = _evalVm;
            _evalVm = NewEvalVm();
            old.Dispose();
        }
    }

    /// <summary>SCRIPT KILL / FUNCTION KILL: null when the running script was asked to stop, else the error reply.</summary>
    internal string? Kill(bool eval)
    {
        var run = _busy;
        if (run is null)
            return "NOTBUSY No scripts in execution right now.";
        if (run.Wrote)
            return "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";
        if (eval && !run.IsEval)
            return BusyFunctionError;
        if (!eval && run.IsEval)
            return BusyEvalError;
        run.RequestKill();
        return null;
    }

    /// <summary>SHUTDOWN NOSAVE while a script is busy: it is stopped whatever it wrote, as the process ends anyway.</summary>
    internal void AbortForShutdown() => _busy?.Abort();

    /// <summary>The cached scripts, oldest first, for diagnostics (INFO, the studio, the debug package); never waits for a running script.</summary>
    internal IReadOnlyList<EvalScript> Scripts => _published;

    private static long VersionNumber(string version)
    {
        var parts = version.Split('.');
        return (long.Parse(parts[0]) << 16) | (long.Parse(parts[1]) << 8) | long.Parse(parts[2]);
    }

    public void Dispose()
    {
        lock (_gate)
        {
            _evalVm.Dispose();
            _evalRun.Dispose();
            Functions.Dispose();
            _functionRun.Dispose();
        }
    }
}
