namespace Diagnostics.Monitor.Linux;

/// <summary>One field of a tracepoint's record, as its format file lays it out.</summary>
public readonly record struct EventField(string Name, string Type, int Offset, int Size, bool Signed)
{
    /// <summary>The field's value as an integer, sign-extended when the kernel says it is signed.</summary>
    public long Read(ReadOnlySpan<byte> record)
    {
        var bytes = record.Slice(Offset, Size);
        return Size switch
        {
            1 => Signed ? (sbyte)bytes[0] : bytes[0],
            2 => Signed ? BitConverter.ToInt16(bytes) : BitConverter.ToUInt16(bytes),
            4 => Signed ? BitConverter.ToInt32(bytes) : BitConverter.ToUInt32(bytes),
            8 => BitConverter.ToInt64(bytes),
            _ => throw new InvalidOperationException($"field {Name} is {Size} bytes, not an integer"),
        };
    }

    /// <summary>A fixed char array field (comm, rwbs) up to its first NUL.</summary>
    public string ReadText(ReadOnlySpan<byte> record)
    {
        var bytes = record.Slice(Offset, Size);
        int end = bytes.IndexOf((byte)0);
        return System.Text.Encoding.ASCII.GetString(end < 0 ? bytes : bytes[..end]);
    }
}
