using Diagnostics.Server.Network;

namespace Diagnostics.Server.Tls;

/// <summary>
/// The socket's stream under a TLS stream, which during the handshake moves each read's
/// continuation to a pool thread. With inline socket completions (Program.cs) the handshake's
/// crypto (the server's signature, checking a client's chain: milliseconds each) would otherwise
/// run on a socket engine thread and stall every other connection it serves. Once the handshake
/// is done <see cref="Hopping"/> is cleared and reads and writes pass straight through.
/// </summary>
internal sealed class HandshakeHopStream(Stream inner) : Stream
{
    public bool Hopping { get; set; } = true;

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        => Hopping ? ReadAndHop(buffer, cancellationToken) : inner.ReadAsync(buffer, cancellationToken);

    private async ValueTask<int> ReadAndHop(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        int read = await inner.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
        await ThreadPoolHop.FromSocketThread();
        return read;
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override int Read(byte[] buffer, int offset, int count) => inner.Read(buffer, offset, count);
    public override int Read(Span<byte> buffer) => inner.Read(buffer);
    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default) => inner.WriteAsync(buffer, cancellationToken);
    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) => inner.WriteAsync(buffer, offset, count, cancellationToken);
    public override void Write(byte[] buffer, int offset, int count) => inner.Write(buffer, offset, count);
    public override void Write(ReadOnlySpan<byte> buffer) => inner.Write(buffer);
    public override Task FlushAsync(CancellationToken cancellationToken) => inner.FlushAsync(cancellationToken);
    public override void Flush() => inner.Flush();

    protected override void Dispose(bool disposing)
    {
        if (disposing)
            inner.Dispose();
        base.Dispose(disposing);
    }

    public override bool CanRead => true;
    public override bool CanSeek => false;
    public override bool CanWrite => true;
    public override long Length => throw new NotSupportedException();
    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }
    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
    public override void SetLength(long value) => throw new NotSupportedException();
}
