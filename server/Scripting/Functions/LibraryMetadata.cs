namespace Diagnostics.Server.Scripting.Functions;

/// <summary>A library's first line, "#!lua name=mylib" (Redis's functionExtractLibMetaData).</summary>
internal static class LibraryMetadata
{
    private const string InvalidName = "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

    /// <summary>The library's name and the length of its first line (without the newline); false with the error reply text.</summary>
    public static bool TryParse(ReadOnlySpan<byte> code, out string name, out int length, out string? error)
    {
        name = "";
        length = 0;
        error = null;
        if (!code.StartsWith("#!"u8))
        {
            error = "ERR Missing library metadata";
            return false;
        }
        int end = code.IndexOf((byte)'\n');
        if (end < 0)
        {
            error = "ERR Invalid library metadata";
            return false;
        }
        length = end;
        string[] parts = System.Text.Encoding.UTF8.GetString(code[..end]).Split([' ', '\t', '\r'], StringSplitOptions.RemoveEmptyEntries);
        if (parts.Length == 0 || parts[0] != "#!lua")
        {
            error = $"ERR Engine '{(parts.Length == 0 ? "" : parts[0][2..])}' not found";
            return false;
        }
        string? found = null;
        for (int i = 1; i < parts.Length; i++)
        {
            if (!parts[i].StartsWith("name=", StringComparison.Ordinal))
            {
                error = "ERR Invalid metadata value given: " + parts[i];
                return false;
            }
            if (found is not null)
            {
                error = "ERR Invalid metadata value, name argument was given multiple times";
                return false;
            }
            found = parts[i][5..];
        }
        if (found is null)
        {
            error = "ERR Library name was not given";
            return false;
        }
        if (!IsValidName(found))
        {
            error = InvalidName;
            return false;
        }
        name = found;
        return true;
    }

    /// <summary>Letters, digits and underscores, at least one.</summary>
    public static bool IsValidName(ReadOnlySpan<char> name)
    {
        if (name.IsEmpty)
            return false;
        foreach (char ch in name)
            if (!char.IsAsciiLetterOrDigit(ch) && ch != '_')
                return false;
        return true;
    }
}
