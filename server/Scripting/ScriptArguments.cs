using Diagnostics.Server.Commands;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Scripting;

/// <summary>
/// Which script a scripting command names, and which of its arguments is a script's source: the
/// slow log records the first, and its API view and the debug package leave the second out (a
/// script may embed secrets), while SLOWLOG GET still shows the arguments as Redis does.
/// </summary>
internal static class ScriptArguments
{
    /// <summary>The script the command runs: EVAL's body's SHA1, EVALSHA's digest, FCALL's function; null for other commands.</summary>
    public static string? ScriptOf(CommandSpec spec, ArgList args)
    {
        if (spec.Parent is not null || args.Count < 2)
            return null;
        return spec.Name switch
        {
            "eval" or "eval_ro" => ScriptDigest.Of(args[1]).ToString(),
            "evalsha" or "evalsha_ro" or "fcall" or "fcall_ro" => System.Text.Encoding.UTF8.GetString(args[1]).ToLowerInvariant(),
            _ => null,
        };
    }

    /// <summary>The index of the argument holding a script's or library's source (or a FUNCTION RESTORE payload), or -1.</summary>
    public static int SourceIndexOf(CommandSpec spec, int argCount)
    {
        string name = spec.Parent is null ? spec.Name : spec.Parent.Name + "|" + spec.Name;
        return name switch
        {
            "eval" or "eval_ro" when argCount > 1 => 1,
            "script|load" when argCount > 2 => 2,
            "function|load" or "function|restore" when argCount > 2 => name == "function|load" ? argCount - 1 : 2,
            _ => -1,
        };
    }
}
