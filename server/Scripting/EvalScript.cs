namespace Diagnostics.Server.Scripting;

/// <summary>A script EVAL or SCRIPT LOAD compiled and cached under its SHA1, with its calls and time.</summary>
internal sealed class EvalScript(ScriptDigest digest, string sha, byte[] body, int function, ScriptFlags flags)
{
    public ScriptDigest Digest { get; } = digest;
    public string Sha { get; } = sha;
    /// <summary>The source as sent; shown only where asked for (it may hold secrets).</summary>
    public byte[] Body { get; } = body;
    /// <summary>The compiled function's reference in the VM's registry.</summary>
    public int Function { get; } = function;
    public ScriptFlags Flags { get; } = flags;
    public long Calls;
    public long Errors;
    public long Ticks;
    public long MaxTicks;
}
