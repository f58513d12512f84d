using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using KeraLua;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Scripting.Lua;

/// <summary>
/// One Lua state set up as Redis's script environment: the standard libraries, the libraries
/// Redis bundles, the redis library (whose C# half is <see cref="ScriptRun"/>), the sandbox of
/// sandbox.lua, and the busy hook. Its memory comes from the tracked allocator
/// (<see cref="LuaAllocator"/>). Not thread-safe: the <see cref="ScriptEngine"/> lets one thread
/// in at a time.
/// </summary>
internal sealed unsafe class LuaVm : IDisposable
{
    private static readonly byte[] SandboxSource = ReadSandbox();

    private readonly KeraLua.Lua _lua;
    private readonly long* _usedBytes;
    private GCHandle _self;
    private readonly int _handlerRef;
    private readonly int _armHookRef;
    private readonly int _globalsRef;
    private readonly int _beginLoadRef;
    private readonly int _endLoadRef;
    private bool _disposed;

    /// <param name="forFunctions">A VM for FUNCTION libraries: it gets redis.register_function's load environment.</param>
    public LuaVm(ScriptEngine engine, ScriptRun run, string version, long versionNumber, bool forFunctions)
    {
        Engine = engine;
        Run = run;
        _usedBytes = (long*)NativeMemory.AllocZeroed((nuint)sizeof(long));
        // KeraLua takes the allocator as a delegate; one made over our function pointer hands
        // lua_newstate that same pointer back.
        var allocator = Marshal.GetDelegateForFunctionPointer<LuaAlloc>((IntPtr)LuaAllocator.Function);
        _lua = new KeraLua.Lua(allocator, (IntPtr)_usedBytes) { Encoding = System.Text.Encoding.UTF8 };
        _lua.OpenLibs();
        // The libraries Redis compiles into its Lua; sandbox.lua makes them read-only globals.
        Libraries.BitLibrary.Open(_lua);
        Libraries.CjsonLibrary.Open(_lua);
        Libraries.CmsgpackLibrary.Open(_lua);
        Libraries.StructLibrary.Open(_lua);
        _self = GCHandle.Alloc(this);

        IntPtr state = State;
        if (LuaApi.LoadText(state, SandboxSource, "=[redis]\0"u8) != LuaApi.StatusOk)
            throw new InvalidOperationException("sandbox.lua does not compile: " + _lua.ToString(-1));
        LuaApi.CreateTable(state, 0, 8);
        AddFunction(state, "call"u8, &CallFunction);
        AddFunction(state, "busy"u8, &BusyFunction);
        AddFunction(state, "sha1hex"u8, &Sha1HexFunction);
        AddFunction(state, "log"u8, &LogFunction);
        AddFunction(state, "setresp"u8, &SetRespFunction);
        AddFunction(state, "set_repl"u8, &SetReplFunction);
        AddFunction(state, "acl_check_cmd"u8, &AclCheckFunction);
        LuaApi.PushBytes(state, System.Text.Encoding.ASCII.GetBytes(version));
        LuaApi.PushInteger(state, versionNumber);
        LuaApi.PushBoolean(state, forFunctions ? 1 : 0);
        if (LuaApi.PCall(state, 4, 6, 0) != LuaApi.StatusOk)
            throw new InvalidOperationException("sandbox.lua failed: " + _lua.ToString(-1));
        // Stack: the globals proxy, the real globals, the error handler, the hook's arming
        // function, FUNCTION LOAD's begin and end (nil outside a functions VM).
        _endLoadRef = LuaApi.Ref(state, LuaApi.RegistryIndex);
        _beginLoadRef = LuaApi.Ref(state, LuaApi.RegistryIndex);
        _armHookRef = LuaApi.Ref(state, LuaApi.RegistryIndex);
        _handlerRef = LuaApi.Ref(state, LuaApi.RegistryIndex);
        _globalsRef = LuaApi.Ref(state, LuaApi.RegistryIndex);
        // From now on every chunk compiled (scripts, and load() inside them) sees the read-only proxy.
        LuaApi.RawSetInteger(state, LuaApi.RegistryIndex, LuaApi.GlobalsSlot);
        // Generational collection: a script's garbage (its KEYS and ARGV, the strings its commands
        // return) dies young, which the incremental collector kept marking over and over.
        _lua.GarbageCollector(LuaGC.Generational, 0, 0);
    }

    public IntPtr State => _lua.Handle;
    public ScriptEngine Engine { get; }
    /// <summary>The run this VM serves; its fields say who is calling now.</summary>
    public ScriptRun Run { get; }

    /// <summary>Bytes Lua holds (INFO used_memory_vm_eval / used_memory_vm_functions).</summary>
    public long UsedBytes => _disposed ? 0 : Volatile.Read(ref *_usedBytes);

    /// <summary>Compiles <paramref name="source"/> (text only) and keeps the function; returns its reference, or -1 with Lua's message in <paramref name="error"/>.</summary>
    public int Compile(ReadOnlySpan<byte> source, ReadOnlySpan<byte> nulTerminatedChunkName, out string? error)
    {
        IntPtr state = State;
        if (LuaApi.LoadText(state, source, nulTerminatedChunkName) != LuaApi.StatusOk)
        {
            error = System.Text.Encoding.UTF8.GetString(LuaApi.ToBytes(state, -1));
            LuaApi.Pop(state, 1);
            return -1;
        }
        error = null;
        return LuaApi.Ref(state, LuaApi.RegistryIndex);
    }

    public void Release(int reference) => LuaApi.Unref(State, LuaApi.RegistryIndex, reference);

    /// <summary>Pushes the error handler and the function <paramref name="reference"/>; returns the handler's stack index for <see cref="Call"/>.</summary>
    public int PushForCall(int reference)
    {
        IntPtr state = State;
        LuaApi.RawGetInteger(state, LuaApi.RegistryIndex, _handlerRef);
        int handler = LuaApi.GetTop(state);
        LuaApi.RawGetInteger(state, LuaApi.RegistryIndex, reference);
        return handler;
    }

    /// <summary>Calls the function pushed by <see cref="PushForCall"/> with <paramref name="arguments"/> arguments pushed after it; one result (or the error) on top.</summary>
    public int Call(int arguments, int handler) => LuaApi.PCall(State, arguments, 1, handler);

    /// <summary>Sets the global <paramref name="name"/> (KEYS, ARGV) to the array of arguments [first, first+count).</summary>
    public void SetGlobalArray(ReadOnlySpan<byte> name, Protocol.ArgList args, int first, int count)
    {
        IntPtr state = State;
        LuaApi.RawGetInteger(state, LuaApi.RegistryIndex, _globalsRef);
        LuaApi.PushBytes(state, name);
        PushArray(args, first, count);
        LuaApi.RawSet(state, -3);
        LuaApi.Pop(state, 1);
    }

    /// <summary>Pushes a table of the arguments [first, first+count).</summary>
    public void PushArray(Protocol.ArgList args, int first, int count)
    {
        IntPtr state = State;
        LuaApi.CreateTable(state, count, 0);
        for (int i = 0; i < count; i++)
        {
            LuaApi.PushBytes(state, args[first + i]);
            LuaApi.RawSetInteger(state, -2, i + 1);
        }
    }

    /// <summary>Puts the busy hook back to counting after a killed script left it firing on every line.</summary>
    public void RearmHook()
    {
        IntPtr state = State;
        LuaApi.RawGetInteger(state, LuaApi.RegistryIndex, _armHookRef);
        LuaApi.PCall(state, 0, 0, 0);
    }

    /// <summary>Switches the globals to the load environment (only redis.register_function and company) for a library's code.</summary>
    public void BeginLoad()
    {
        IntPtr state = State;
        LuaApi.RawGetInteger(state, LuaApi.RegistryIndex, _beginLoadRef);
        LuaApi.PCall(state, 0, 0, 0);
    }

    /// <summary>Switches the globals back and pushes the list of functions the library registered: {name=, callback=, flags={...}, description=}.</summary>
    public void EndLoad()
    {
        IntPtr state = State;
        LuaApi.RawGetInteger(state, LuaApi.RegistryIndex, _endLoadRef);
        if (LuaApi.PCall(state, 0, 1, 0) != LuaApi.StatusOk)
        {
            LuaApi.Pop(state, 1);
            LuaApi.CreateTable(state, 0, 0);
        }
    }

    /// <summary>Pops the value on top of the stack into the registry; returns its reference.</summary>
    public int Keep() => LuaApi.Ref(State, LuaApi.RegistryIndex);

    /// <summary>A full collection (after SCRIPT FLUSH / FUNCTION FLUSH dropped the references).</summary>
    public void Collect() => _lua.GarbageCollector(LuaGC.Collect, 0);

    private void AddFunction(IntPtr state, ReadOnlySpan<byte> name, delegate* unmanaged[Cdecl]<IntPtr, int> function)
    {
        LuaApi.PushBytes(state, name);
        LuaApi.PushLightUserData(state, GCHandle.ToIntPtr(_self));
        LuaApi.PushCClosure(state, function, 1);
        LuaApi.RawSet(state, -3);
    }

    private static LuaVm Of(IntPtr state) => (LuaVm)GCHandle.FromIntPtr(LuaApi.ToUserData(state, LuaApi.UpvalueIndex(1))).Target!;

    // ---- callbacks: none may raise a Lua error or let an exception out (see LuaApi) -------------

    [UnmanagedCallersOnly(CallConvs = [typeof(CallConvCdecl)])]
    private static int CallFunction(IntPtr state)
    {
        var vm = Of(state);
        try
        {
            return vm.Run.Call(state);
        }
        catch (Exception ex)
        {
            vm.Run.Log.LogError(ex, "redis.call failed inside the server");
            LuaApi.SetTop(state, 0);
            LuaApi.CreateTable(state, 0, 1);
            LuaApi.PushBytes(state, "err"u8);
            LuaApi.PushBytes(state, "ERR internal error while running the command"u8);
            LuaApi.RawSet(state, -3);
            LuaApi.PushBoolean(state, 1);
            return 2;
        }
    }

    [UnmanagedCallersOnly(CallConvs = [typeof(CallConvCdecl)])]
    private static int BusyFunction(IntPtr state)
    {
        var vm = Of(state);
        try
        {
            return vm.Run.CheckBusy(state, vm.Engine);
        }
        catch (Exception ex)
        {
            vm.Run.Log.LogError(ex, "The script busy check failed");
            return 0;
        }
    }

    [UnmanagedCallersOnly(CallConvs = [typeof(CallConvCdecl)])]
    private static int Sha1HexFunction(IntPtr state)
    {
        try
        {
            return ScriptRun.Sha1Hex(state);
        }
        catch (Exception)
        {
            return 0;
        }
    }

    [UnmanagedCallersOnly(CallConvs = [typeof(CallConvCdecl)])]
    private static int LogFunction(IntPtr state)
    {
        var vm = Of(state);
        try
        {
            return vm.Run.LogMessage(state);
        }
        catch (Exception)
        {
            return 0;
        }
    }

    [UnmanagedCallersOnly(CallConvs = [typeof(CallConvCdecl)])]
    private static int SetRespFunction(IntPtr state)
    {
        try
        {
            return Of(state).Run.SetResp(state);
        }
        catch (Exception)
        {
            return 0;
        }
    }

    [UnmanagedCallersOnly(CallConvs = [typeof(CallConvCdecl)])]
    private static int SetReplFunction(IntPtr state)
    {
        try
        {
            return Of(state).Run.SetRepl(state);
        }
        catch (Exception)
        {
            return 0;
        }
    }

    [UnmanagedCallersOnly(CallConvs = [typeof(CallConvCdecl)])]
    private static int AclCheckFunction(IntPtr state)
    {
        try
        {
            return Of(state).Run.AclCheckCmd(state);
        }
        catch (Exception)
        {
            return 0;
        }
    }

    private static byte[] ReadSandbox()
    {
        using var stream = typeof(LuaVm).Assembly.GetManifestResourceStream("Diagnostics.Server.Scripting.sandbox.lua")
            ?? throw new InvalidOperationException("sandbox.lua is not embedded");
        var bytes = new byte[stream.Length];
        stream.ReadExactly(bytes);
        return bytes;
    }

    public void Dispose()
    {
        if (_disposed)
            return;
        _disposed = true;
        _lua.Dispose(); // lua_close frees everything through the allocator
        _self.Free();
        NativeMemory.Free(_usedBytes);
    }
}
