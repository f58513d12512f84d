namespace Diagnostics.Server.Scripting;

/// <summary>
/// The first line of an EVAL script that starts with "#!" (Redis's evalExtractShebangFlags):
/// "#!lua" and optional "flags=a,b". A script without one runs in eval compatibility mode.
/// </summary>
internal static class Shebang
{
    /// <summary>
    /// Reads the shebang of <paramref name="body"/>: its flags and the length of its line (without
    /// the newline); false with the error reply text when it is not one Redis accepts.
    /// </summary>
    public static bool TryParse(ReadOnlySpan<byte> body, out ScriptFlags flags, out int length, out string? error)
    {
        flags = ScriptFlags.EvalCompat;
        length = 0;
        error = null;
        if (!body.StartsWith("#!"u8))
            return true;
        int end = body.IndexOf((byte)'\n');
        if (end < 0)
        {
            error = "ERR Invalid script shebang";
            return false;
        }
        length = end;
        string line = System.Text.Encoding.UTF8.GetString(body[..end]);
        string[] parts = line.Split([' ', '\t', '\r'], StringSplitOptions.RemoveEmptyEntries);
        if (parts.Length == 0 || parts[0] != "#!lua")
        {
            error = "ERR Unexpected engine in script shebang: " + (parts.Length == 0 ? line : parts[0]);
            return false;
        }
        flags = ScriptFlags.None;
        for (int i = 1; i < parts.Length; i++)
        {
            if (!parts[i].StartsWith("flags=", StringComparison.Ordinal))
            {
                error = "ERR Unknown lua shebang option: " + parts[i];
                return false;
            }
            foreach (string name in parts[i][6..].Split(','))
            {
                if (name.Length == 0)
                    continue;
                if (!ScriptFlagNames.TryParse(name, out var flag))
                {
                    error = "ERR Unexpected flag in script shebang: " + name;
                    return false;
                }
                flags |= flag;
            }
        }
        return true;
    }
}
