using System.Runtime.CompilerServices;

namespace Diagnostics.Server.Network;

/// <summary>
/// The socket's stream as the reply pipe writes it, counting what the kernel has accepted. The pipe
/// writes one block at a time and each write completes only once the kernel took all of it, so
/// "produced minus sent" is exactly what this server still holds for the client (CLIENT LIST
/// omem), even while a flush is stuck on a client that does not read. One writer at a time (the
/// pipe's flush); other threads only read the totals. The server's total_net_output_bytes and the
/// sending thread's output are counted here too, as Redis counts what write() accepted: bytes a
/// client never read are not output.
/// </summary>
internal sealed class SendCountingStream(Stream socketStream, Diagnostics.Info.ServerStats stats) : Stream
{
    private long _sentBytes;
    private long _sentBlocks;

    public long SentBytes => Volatile.Read(ref _sentBytes);
    public long SentBlocks => Volatile.Read(ref _sentBlocks);

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        ValueTask send = socketStream.WriteAsync(buffer, cancellationToken);
        if (!send.IsCompletedSuccessfully)
            return AwaitSend(send, buffer.Length);
        send.GetAwaiter().GetResult();
        Counted(buffer.Length);
        return default;
    }

    // Only when the kernel's send buffer is full; pooled so a slow reader costs no allocation per block.
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask AwaitSend(ValueTask send, int length)
    {
        await send.ConfigureAwait(false);
        Counted(length);
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override void Write(byte[] buffer, int offset, int count)
    {
        socketStream.Write(buffer, offset, count);
        Counted(count);
    }

    private void Counted(int length)
    {
        Volatile.Write(ref _sentBytes, _sentBytes + length);
        Volatile.Write(ref _sentBlocks, _sentBlocks + 1);
        stats.NetOutput(length);
        Diagnostics.Threads.ThreadCounters.Current.NetOutputBytes += length;
    }

    public override Task FlushAsync(CancellationToken cancellationToken) => socketStream.FlushAsync(cancellationToken);
    public override void Flush() => socketStream.Flush();

    public override bool CanRead => false;
    public override bool CanSeek => false;
    public override bool CanWrite => true;
    public override long Length => throw new NotSupportedException();
    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }
    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
    public override void SetLength(long value) => throw new NotSupportedException();
}
