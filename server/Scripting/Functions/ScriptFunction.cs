namespace Diagnostics.Server.Scripting.Functions;

/// <summary>One function a library registered with redis.register_function: FCALL runs it by name.</summary>
internal sealed class ScriptFunction(string name, FunctionLibrary library, int function, ScriptFlags flags, string[] flagNames, string? description)
    : CompiledScript(name, function, flags)
{
    public FunctionLibrary Library { get; } = library;
    /// <summary>The flags as registered (FUNCTION LIST shows them in this order).</summary>
    public string[] FlagNames { get; } = flagNames;
    public string? Description { get; } = description;
    public override string Activity { get; } = "function " + name;
}
