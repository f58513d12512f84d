namespace Diagnostics.Server.Protocol;

/// <summary>
/// Splits an inline command line into arguments with the quoting rules of Redis's inline
/// protocol (and redis-cli): "double quotes" with \n \r \t \b \a \\ \" and \xHH escapes,
/// 'single quotes' with only \' escaped, and a closing quote must be followed by a space.
/// </summary>
internal static class InlineSplitter
{
    public static unsafe bool Split(ReadOnlySpan<byte> line, RequestBatch batch)
    {
        int i = 0;
        while (true)
        {
            while (i < line.Length && IsSpace(line[i]))
                i++;
            if (i >= line.Length)
                return true;

            // An argument is never longer than the rest of the line, so reserve that much.
            byte* target = batch.Reserve(line.Length - i);
            int length = 0;
            bool inDouble = false, inSingle = false;
            while (true)
            {
                if (inDouble)
                {
                    if (i >= line.Length)
                        return false;
                    byte c = line[i];
                    if (c == (byte)'\\' && i + 3 < line.Length && line[i + 1] == (byte)'x' && IsHex(line[i + 2]) && IsHex(line[i + 3]))
                    {
                        target[length++] = (byte)(HexValue(line[i + 2]) * 16 + HexValue(line[i + 3]));
                        i += 4;
                    }
                    else if (c == (byte)'\\' && i + 1 < line.Length)
                    {
                        byte e = line[i + 1];
                        target[length++] = e switch
                        {
                            (byte)'n' => (byte)'\n',
                            (byte)'r' => (byte)'\r',
                            (byte)'t' => (byte)'\t',
                            (byte)'b' => (byte)'\b',
                            (byte)'a' => (byte)'\a',
                            _ => e,
                        };
                        i += 2;
                    }
                    else if (c == (byte)'"')
                    {
                        i++;
                        if (i < line.Length && !IsSpace(line[i]))
                            return false; // closing quote must be followed by a space or the end
                        inDouble = false;
                        break;
                    }
                    else
                    {
                        target[length++] = c;
                        i++;
                    }
                }
                else if (inSingle)
                {
                    if (i >= line.Length)
                        return false;
                    byte c = line[i];
                    if (c == (byte)'\\' && i + 1 < line.Length && line[i + 1] == (byte)'\'')
                    {
                        target[length++] = (byte)'\'';
                        i += 2;
                    }
                    else if (c == (byte)'\'')
                    {
                        i++;
                        if (i < line.Length && !IsSpace(line[i]))
                            return false;
                        inSingle = false;
                        break;
                    }
                    else
                    {
                        target[length++] = c;
                        i++;
                    }
                }
                else
                {
                    if (i >= line.Length || IsSpace(line[i]))
                        break;
                    byte c = line[i++];
                    if (c == (byte)'"')
                        inDouble = true;
                    else if (c == (byte)'\'')
                        inSingle = true;
                    else
                        target[length++] = c;
                }
            }
            batch.CommitArg(length);
        }
    }

    private static bool IsSpace(byte b) => b is (byte)' ' or (byte)'\n' or (byte)'\r' or (byte)'\t' or (byte)'\v' or (byte)'\f';
    private static bool IsHex(byte b) => b is >= (byte)'0' and <= (byte)'9' or >= (byte)'a' and <= (byte)'f' or >= (byte)'A' and <= (byte)'F';
    private static int HexValue(byte b) => b <= (byte)'9' ? b - '0' : (b | 0x20) - 'a' + 10;
}
