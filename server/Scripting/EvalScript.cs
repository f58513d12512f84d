namespace Diagnostics.Server.Scripting;

/// <summary>A script EVAL or SCRIPT LOAD compiled and cached under its SHA1.</summary>
internal sealed class EvalScript(ScriptDigest digest, string sha, byte[] body, int function, ScriptFlags flags)
    : CompiledScript(sha, function, flags)
{
    public ScriptDigest Digest { get; } = digest;
    public string Sha => Name;
    /// <summary>The source as sent; shown only where asked for (it may hold secrets).</summary>
    public byte[] Body { get; } = body;
    public override string Activity { get; } = "script " + sha;
}
