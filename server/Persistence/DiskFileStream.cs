using Diagnostics.Server.Diagnostics.Disk;

namespace Diagnostics.Server.Persistence;

/// <summary>A read-only, seekable <see cref="Stream"/> over a <see cref="DiskFile"/>, so stream readers (RDB) are counted too.</summary>
internal sealed class DiskFileStream(DiskFile file, DiskIoPurpose purpose) : Stream
{
    private long _position;

    public override bool CanRead => true;
    public override bool CanSeek => true;
    public override bool CanWrite => false;
    public override long Length => file.Length;

    public override long Position
    {
        get => _position;
        set => _position = value;
    }

    public override int Read(Span<byte> buffer)
    {
        int read = file.Read(buffer, _position, purpose);
        _position += read;
        return read;
    }

    public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

    public override long Seek(long offset, SeekOrigin origin)
    {
        _position = origin switch
        {
            SeekOrigin.Begin => offset,
            SeekOrigin.Current => _position + offset,
            _ => Length + offset,
        };
        return _position;
    }

    public override void Flush() { }
    public override void SetLength(long value) => throw new NotSupportedException();
    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
}
