namespace Diagnostics.Server.Scripting;

/// <summary>
/// A Lua function the engine can run: an EVAL script or a FUNCTION library's function. Holds its
/// compiled function's reference in its VM, its flags, and its calls and time (INFO scriptstats,
/// the studio, the debug package).
/// </summary>
internal abstract class CompiledScript(string name, int function, ScriptFlags flags)
{
    /// <summary>What errors, the slow log and stats call it: the SHA1, or the function's name.</summary>
    public string Name { get; } = name;
    /// <summary>The compiled function's reference in its VM's registry.</summary>
    public int Function { get; } = function;
    public ScriptFlags Flags { get; } = flags;
    /// <summary>What the in-flight view shows while it runs, built once ("script sha", "function name").</summary>
    public abstract string Activity { get; }
    public long Calls;
    public long Errors;
    public long Ticks;
    public long MaxTicks;
    /// <summary>Its last run took less than <see cref="ScriptEngine.SocketThreadBudgetMs"/>: the next may start on a socket engine thread.</summary>
    public bool RanQuick;
}
