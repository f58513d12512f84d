namespace Diagnostics.Server.Replication;

/// <summary>
/// The master's RDB as a stream for the RDB reader, read straight from the link's buffer: at most
/// the announced length (<c>$len</c>), or up to the reader's own end (diskless <c>$EOF:mark</c>:
/// the reader stops at the RDB's checksum and the link checks the mark that follows). A stall of
/// repl-timeout fails the transfer, as Redis's "Timeout receiving bulk data from MASTER".
/// </summary>
internal sealed class RdbTransferStream(MasterConnection connection, long length, int timeoutMs) : Stream
{
    /// <summary>RDB bytes handed to the reader.</summary>
    public long Transferred { get; private set; }

    public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

    public override int Read(Span<byte> destination)
    {
        if (length >= 0)
        {
            long left = length - Transferred;
            if (left <= 0)
                return 0;
            if (destination.Length > left)
                destination = destination[..(int)left];
        }
        if (destination.IsEmpty)
            return 0;
        while (connection.Available == 0)
        {
            if (!connection.Fill(timeoutMs))
                throw new TimeoutException("Timeout receiving bulk data from MASTER... If the problem persists try to set the 'repl-timeout' parameter in redis.conf to a larger value.");
        }
        int n = Math.Min(destination.Length, connection.Available);
        connection.Buffer.AsSpan(connection.Begin, n).CopyTo(destination);
        connection.Begin += n;
        Transferred += n;
        return n;
    }

    public override bool CanRead => true;
    public override bool CanSeek => false;
    public override bool CanWrite => false;
    public override long Length => throw new NotSupportedException();
    public override long Position { get => Transferred; set => throw new NotSupportedException(); }
    public override void Flush() { }
    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
    public override void SetLength(long value) => throw new NotSupportedException();
    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
}
