using System.IO.Pipelines;

namespace Diagnostics.Server.Scripting;

/// <summary>
/// Where the replies of the commands a script calls are written (a <see cref="PipeWriter"/>, so
/// the ordinary <see cref="Protocol.RespWriter"/> writes them), read back into Lua values and then
/// forgotten. One array, reused call after call: a script's redis.call allocates nothing here once
/// it has seen its largest reply.
/// </summary>
internal sealed class ScriptReplyBuffer : PipeWriter
{
    // A reply bigger than this is not kept for the next call.
    private const int RetainedBytes = 1024 * 1024;
    private byte[] _buffer = new byte[4096];
    private int _written;

    /// <summary>The bytes written since the last <see cref="Reset"/>.</summary>
    public ReadOnlySpan<byte> Written => _buffer.AsSpan(0, _written);

    public void Reset()
    {
        _written = 0;
        if (_buffer.Length > RetainedBytes)
            _buffer = new byte[4096];
    }

    public override void Advance(int bytes) => _written += bytes;

    public override Memory<byte> GetMemory(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsMemory(_written);
    }

    public override Span<byte> GetSpan(int sizeHint = 0)
    {
        Ensure(sizeHint);
        return _buffer.AsSpan(_written);
    }

    private void Ensure(int sizeHint)
    {
        int needed = _written + Math.Max(sizeHint, 256);
        if (needed > _buffer.Length)
            Array.Resize(ref _buffer, Math.Max(needed, _buffer.Length * 2));
    }

    public override void CancelPendingFlush() { }
    public override void Complete(Exception? exception = null) { }
    public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default) => new(new FlushResult(false, false));
}
