using System.Text;
using Diagnostics.Server.Commands;
using Diagnostics.Server.Scripting.Lua;

namespace Diagnostics.Server.Scripting.Functions;

/// <summary>
/// The FUNCTION libraries of one server (Redis's functions.c and function_lua.c): their own Lua
/// VM, the libraries by name and their functions by name, loading (a library's code runs once
/// with only redis.register_function in reach), deleting, and FCALL. Every change happens under
/// the <see cref="ScriptEngine"/>'s gate; what diagnostics read is published whole.
/// </summary>
internal sealed class FunctionStore : IDisposable
{
    private readonly ScriptEngine _engine;
    private readonly Func<LuaVm> _newVm;
    private LuaVm _vm;
    private readonly Dictionary<string, FunctionLibrary> _libraries = new(StringComparer.Ordinal);
    // Function names are found whatever their case, as in Redis; library names are not.
    private readonly Dictionary<string, ScriptFunction> _functions = new(StringComparer.OrdinalIgnoreCase);
    private readonly Dictionary<string, ScriptFunction>.AlternateLookup<ReadOnlySpan<char>> _functionsByName;
    private volatile FunctionLibrary[] _published = [];

    public FunctionStore(ScriptEngine engine, Func<LuaVm> newVm)
    {
        _engine = engine;
        _newVm = newVm;
        _vm = newVm();
        _functionsByName = _functions.GetAlternateLookup<ReadOnlySpan<char>>();
    }

    /// <summary>The libraries, in load order, for FUNCTION LIST and diagnostics; never waits for a running function.</summary>
    public IReadOnlyList<FunctionLibrary> Libraries => _published;
    public int FunctionCount { get { int n = 0; foreach (var library in _published) n += library.Functions.Count; return n; } }
    public long VmBytes => _vm.UsedBytes;
    /// <summary>Bytes of the libraries' code and entries (INFO used_memory_functions).</summary>
    public long CodeBytes { get { long n = 0; foreach (var library in _published) n += library.Code.Length + 64 + library.Functions.Count * 96; return n; } }

    // ---- FCALL ----------------------------------------------------------------------------------

    /// <summary>FCALL / FCALL_RO function numkeys key... arg...; the caller holds the gate.</summary>
    public void Call(ref CommandContext c, bool readOnlyCommand)
    {
        ReadOnlySpan<byte> nameBytes = c.Arg(1);
        ScriptFunction? function = null;
        if (nameBytes.Length <= 256)
        {
            Span<char> name = stackalloc char[nameBytes.Length];
            int length = Encoding.UTF8.GetChars(nameBytes, name);
            _functionsByName.TryGetValue(name[..length], out function);
        }
        if (function is null)
        {
            c.Error("ERR Function not found");
            return;
        }
        if (!Protocol.NumberFormat.TryParseInt64(c.Arg(2), out long numKeys))
        {
            c.Error("ERR Bad number of keys provided");
            return;
        }
        if (numKeys > c.ArgCount - 3)
        {
            c.Error("ERR Number of keys can't be greater than number of args");
            return;
        }
        if (numKeys < 0)
        {
            c.Error("ERR Number of keys can't be negative");
            return;
        }
        _engine.Run(ref c, function, _vm, (int)numKeys, readOnlyCommand);
    }

    // ---- FUNCTION LOAD / DELETE / FLUSH ------------------------------------------------------------

    /// <summary>Loads (or with <paramref name="replace"/> replaces) the library in <paramref name="code"/>; its name, or null with the error reply text.</summary>
    public string? Load(ReadOnlySpan<byte> code, bool replace, out string? error)
    {
        if (!LibraryMetadata.TryParse(code, out string name, out int metadataLength, out error))
            return null;
        _libraries.TryGetValue(name, out var existing);
        if (existing is not null && !replace)
        {
            error = $"ERR Library '{name}' already exists";
            return null;
        }
        var library = new FunctionLibrary(name, code.ToArray());
        if (!Register(library, code[metadataLength..], out error))
            return null;
        foreach (var function in library.Functions)
        {
            if (_functions.TryGetValue(function.Name, out var other) && other.Library != existing)
            {
                Release(library);
                error = $"ERR Function {function.Name} already exists";
                return null;
            }
        }
        if (existing is not null)
            Remove(existing);
        _libraries.Add(name, library);
        foreach (var function in library.Functions)
            _functions.Add(function.Name, function);
        Publish();
        return name;
    }

    /// <summary>Compiles the library and runs its code in the load environment, collecting what it registered.</summary>
    private bool Register(FunctionLibrary library, ReadOnlySpan<byte> body, out string? error)
    {
        int chunk = _vm.Compile(body, "@user_function\0"u8, out string? compileError);
        if (chunk < 0)
        {
            error = "ERR Error compiling function: " + compileError;
            return false;
        }
        IntPtr state = _vm.State;
        int top = LuaApi.GetTop(state);
        try
        {
            int handler = _vm.PushForCall(chunk);
            _vm.BeginLoad();
            int status = _vm.Call(0, handler);
            _vm.EndLoad();
            if (status != LuaApi.StatusOk)
            {
                error = "ERR Error registering functions: " + ErrorText(state, -2);
                return false;
            }
            long count = (long)LuaApi.RawLength(state, -1);
            if (count == 0)
            {
                error = "ERR No functions registered";
                return false;
            }
            for (long i = 1; i <= count; i++)
            {
                LuaApi.RawGetInteger(state, -1, i);
                library.Functions.Add(ReadRegistered(state, library));
                LuaApi.Pop(state, 1);
            }
            error = null;
            return true;
        }
        finally
        {
            LuaApi.SetTop(state, top);
            _vm.Release(chunk);
        }
    }

    /// <summary>One {name=, callback=, flags=, description=} entry on top of the stack, its callback kept in the registry.</summary>
    private ScriptFunction ReadRegistered(IntPtr state, FunctionLibrary library)
    {
        string name = StringField(state, "name"u8) ?? "";
        string? description = StringField(state, "description"u8);
        var flagNames = new List<string>();
        var flags = ScriptFlags.None;
        LuaApi.PushBytes(state, "flags"u8);
        if (LuaApi.RawGet(state, -2) == LuaApi.TypeTable)
        {
            for (long j = 1; LuaApi.RawGetInteger(state, -1, j) == LuaApi.TypeString; j++)
            {
                string flag = Encoding.UTF8.GetString(LuaApi.ToBytes(state, -1));
                LuaApi.Pop(state, 1);
                flagNames.Add(flag);
                if (ScriptFlagNames.TryParse(flag, out var parsed))
                    flags |= parsed;
            }
            LuaApi.Pop(state, 1);
        }
        LuaApi.Pop(state, 1);
        LuaApi.PushBytes(state, "callback"u8);
        LuaApi.RawGet(state, -2);
        int callback = _vm.Keep();
        return new ScriptFunction(name, library, callback, flags, [.. flagNames], description);
    }

    private static string? StringField(IntPtr state, ReadOnlySpan<byte> name)
    {
        LuaApi.PushBytes(state, name);
        string? value = LuaApi.RawGet(state, -2) == LuaApi.TypeString ? Encoding.UTF8.GetString(LuaApi.ToBytes(state, -1)) : null;
        LuaApi.Pop(state, 1);
        return value;
    }

    /// <summary>An error object's text: an {err=} table's, or "ERR " and a string's.</summary>
    private static string ErrorText(IntPtr state, int index)
    {
        if (LuaApi.Type(state, index) == LuaApi.TypeTable)
        {
            LuaApi.PushBytes(state, "err"u8);
            string text = LuaApi.RawGet(state, index - 1) == LuaApi.TypeString ? Encoding.UTF8.GetString(LuaApi.ToBytes(state, -1)) : "ERR unknown error";
            LuaApi.Pop(state, 1);
            return text;
        }
        return LuaApi.Type(state, index) == LuaApi.TypeString ? "ERR " + Encoding.UTF8.GetString(LuaApi.ToBytes(state, index)) : "ERR unknown error";
    }

    /// <summary>FUNCTION DELETE: false when there is no such library.</summary>
    public bool Delete(string name)
    {
        if (!_libraries.TryGetValue(name, out var library))
            return false;
        Remove(library);
        Publish();
        return true;
    }

    /// <summary>FUNCTION FLUSH: every library gone, and a fresh VM, as Redis does.</summary>
    public void Flush()
    {
        _libraries.Clear();
        _functions.Clear();
        Publish();
        var old = _vm;
        _vm = _newVm();
        old.Dispose();
    }

    private void Remove(FunctionLibrary library)
    {
        _libraries.Remove(library.Name);
        foreach (var function in library.Functions)
            _functions.Remove(function.Name);
        Release(library);
    }

    private void Release(FunctionLibrary library)
    {
        foreach (var function in library.Functions)
            _vm.Release(function.Function);
    }

    private void Publish() => _published = [.. _libraries.Values];

    public void Dispose() => _vm.Dispose();
}
