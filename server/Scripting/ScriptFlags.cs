namespace Diagnostics.Server.Scripting;

/// <summary>What a script declares in its shebang (<c>#!lua flags=no-writes,allow-oom</c>) or a function in register_function.</summary>
[Flags]
internal enum ScriptFlags
{
    None = 0,
    NoWrites = 1,
    AllowOom = 2,
    AllowStale = 4,
    NoCluster = 8,
    AllowCrossSlotKeys = 16,
    /// <summary>No shebang: Redis's eval compatibility mode (may write, memory checked per command).</summary>
    EvalCompat = 1 << 8,
}

internal static class ScriptFlagNames
{
    public static readonly (ScriptFlags Flag, string Name)[] All =
    [
        (ScriptFlags.NoWrites, "no-writes"), (ScriptFlags.AllowOom, "allow-oom"), (ScriptFlags.AllowStale, "allow-stale"),
        (ScriptFlags.NoCluster, "no-cluster"), (ScriptFlags.AllowCrossSlotKeys, "allow-cross-slot-keys"),
    ];

    public static bool TryParse(ReadOnlySpan<char> name, out ScriptFlags flag)
    {
        foreach (var (f, n) in All)
        {
            if (name.Equals(n, StringComparison.Ordinal))
            {
                flag = f;
                return true;
            }
        }
        flag = ScriptFlags.None;
        return false;
    }
}
