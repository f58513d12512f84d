namespace Diagnostics.Server.Scripting.Functions;

/// <summary>A library FUNCTION LOAD made: its name, its code as sent, and the functions it registered.</summary>
internal sealed class FunctionLibrary(string name, byte[] code)
{
    public string Name { get; } = name;
    /// <summary>The code, shebang included (FUNCTION LIST WITHCODE, FUNCTION DUMP, the AOF rewrite).</summary>
    public byte[] Code { get; } = code;
    public List<ScriptFunction> Functions { get; } = [];
}
