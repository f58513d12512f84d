using System.Buffers;
using System.Buffers.Text;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using System.Text;

namespace Diagnostics.Server.Protocol;

/// <summary>
/// Writes replies straight into a connection's <see cref="PipeWriter"/>, in RESP2 or RESP3 as the
/// client negotiated with HELLO. One instance per connection, reused for every reply; it keeps the
/// current output buffer between calls so small replies cost one bounds check, not a GetMemory.
/// Only one thread writes at a time: the connection, or the shard executor running its batch.
/// </summary>
public sealed class RespWriter
{
    private const int MinimumBuffer = 4096;
    private PipeWriter _output;
    private Memory<byte> _buffer;
    private int _used;
    // Bytes handed to the pipe since the writer was made, and that total plus _used as of the last
    // TakeWrittenCount. Only the writing thread changes them; others may read them (CLIENT LIST).
    private long _committed;
    private long _taken;
    private long _blocks;
    private bool _discarding;
    private byte[]? _scratch;

    public RespWriter(PipeWriter output) => _output = output;

    /// <summary>Consulted at every new block of output; null: no limits (AOF replay, tests).</summary>
    public IReplyBufferGuard? Guard { get; set; }

    /// <summary>2 or 3, as set by HELLO.</summary>
    public int Protocol { get; set; } = 2;

    /// <summary>When set, replies are dropped (CLIENT REPLY OFF / SKIP).</summary>
    public bool Muted { get; set; }

    /// <summary>
    /// Every reply byte put in the pipe or in the open block since the start (discarded bytes
    /// excluded). The acquire read keeps a caller's later read of the sent total from being done
    /// first, so "produced minus sent" read from another thread errs low, never high.
    /// </summary>
    public long Produced => Volatile.Read(ref _committed) + OpenBlockBytes;

    /// <summary>Reply bytes in the block being filled, not yet handed to the pipe (CLIENT LIST obl).</summary>
    public int OpenBlockBytes => _discarding ? 0 : _used;

    /// <summary>Output blocks taken from the pipe since the start, the open one included (for CLIENT LIST oll).</summary>
    public long Blocks => _blocks;

    /// <summary>
    /// True once the guard refused more output: replies go to a scratch buffer and are dropped,
    /// so a client over its limit holds no more memory while it is being closed.
    /// </summary>
    public bool Discarding => _discarding;

    /// <summary>Bytes written since the last <see cref="TakeWrittenCount"/>, without resetting.</summary>
    public long PendingBytes => Produced - _taken;

    /// <summary>Bytes written since the last <see cref="TakeWrittenCount"/>.</summary>
    public long TakeWrittenCount()
    {
        long produced = Produced;
        long n = produced - _taken;
        _taken = produced;
        return n;
    }

    /// <summary>Hands buffered bytes to the pipe; call before flushing.</summary>
    public void Commit()
    {
        if (_used > 0)
        {
            if (!_discarding)
            {
                _output.Advance(_used);
                _committed += _used;
            }
            _used = 0;
        }
        _buffer = default;
    }

    public void Ok() => WriteRaw("+OK\r\n"u8);
    public void Queued() => WriteRaw("+QUEUED\r\n"u8);
    public void Pong() => WriteRaw("+PONG\r\n"u8);

    public void SimpleString(ReadOnlySpan<byte> text)
    {
        if (Muted) return;
        Span<byte> span = Reserve(text.Length + 3);
        span[0] = (byte)'+';
        text.CopyTo(span[1..]);
        span[text.Length + 1] = (byte)'\r';
        span[text.Length + 2] = (byte)'\n';
        _used += text.Length + 3;
    }

    public void SimpleString(string text) => AsciiLine((byte)'+', text);

    /// <summary>An error reply, <paramref name="message"/> starting with its code ("ERR ...", "WRONGTYPE ..."); counted under its code for INFO errorstats even when replies are muted, as Redis.</summary>
    public void Error(string message)
    {
        Diagnostics.Threads.ThreadCounters.Current.CountError(message);
        AsciiLine((byte)'-', message);
    }

    public void Integer(long value)
    {
        if (Muted) return;
        Span<byte> span = Reserve(24);
        span[0] = (byte)':';
        Utf8Formatter.TryFormat(value, span[1..], out int n);
        span[n + 1] = (byte)'\r';
        span[n + 2] = (byte)'\n';
        _used += n + 3;
    }

    public void Bulk(ReadOnlySpan<byte> value)
    {
        if (Muted) return;
        if (value.Length > MinimumBuffer * 4)
        {
            LargeBulk(value);
            return;
        }
        Span<byte> span = Reserve(value.Length + 16);
        int n = Header(span, (byte)'$', value.Length);
        value.CopyTo(span[n..]);
        n += value.Length;
        span[n] = (byte)'\r';
        span[n + 1] = (byte)'\n';
        _used += n + 2;
    }

    public void Bulk(string value) => Bulk(value.AsSpan());

    /// <summary>A bulk string of UTF-8 encoded text.</summary>
    public void Bulk(ReadOnlySpan<char> value)
    {
        if (Muted) return;
        int length = Encoding.UTF8.GetByteCount(value);
        Span<byte> span = Reserve(length + 16);
        int n = Header(span, (byte)'$', length);
        n += Encoding.UTF8.GetBytes(value, span[n..]);
        span[n] = (byte)'\r';
        span[n + 1] = (byte)'\n';
        _used += n + 2;
    }

    /// <summary>A bulk string holding the decimal form of <paramref name="value"/>.</summary>
    public void BulkInteger(long value)
    {
        Span<byte> digits = stackalloc byte[24];
        Utf8Formatter.TryFormat(value, digits, out int n);
        Bulk(digits[..n]);
    }

    /// <summary>The null bulk string: $-1 in RESP2, _ in RESP3.</summary>
    public void Null() => WriteRaw(Protocol == 3 ? "_\r\n"u8 : "$-1\r\n"u8);

    /// <summary>The null array: *-1 in RESP2, _ in RESP3.</summary>
    public void NullArray() => WriteRaw(Protocol == 3 ? "_\r\n"u8 : "*-1\r\n"u8);

    public void ArrayHeader(long count) => AggregateHeader((byte)'*', count);

    /// <summary>A map of <paramref name="pairs"/> entries: % in RESP3, a flat array in RESP2.</summary>
    public void MapHeader(long pairs)
    {
        if (Protocol == 3) AggregateHeader((byte)'%', pairs);
        else AggregateHeader((byte)'*', pairs * 2);
    }

    /// <summary>A set: ~ in RESP3, an array in RESP2.</summary>
    public void SetHeader(long count) => AggregateHeader(Protocol == 3 ? (byte)'~' : (byte)'*', count);

    /// <summary>An out-of-band push (RESP3 &gt;); RESP2 clients receive an array.</summary>
    public void PushHeader(long count) => AggregateHeader(Protocol == 3 ? (byte)'>' : (byte)'*', count);

    public void Boolean(bool value)
    {
        if (Protocol == 3) WriteRaw(value ? "#t\r\n"u8 : "#f\r\n"u8);
        else WriteRaw(value ? ":1\r\n"u8 : ":0\r\n"u8);
    }

    /// <summary>A double: RESP3 ",", RESP2 a bulk string, both with Redis's formatting.</summary>
    public void Double(double value)
    {
        Span<byte> text = stackalloc byte[40];
        int n = NumberFormat.FormatDouble(value, text);
        if (Protocol == 3)
        {
            if (Muted) return;
            Span<byte> span = Reserve(n + 3);
            span[0] = (byte)',';
            text[..n].CopyTo(span[1..]);
            span[n + 1] = (byte)'\r';
            span[n + 2] = (byte)'\n';
            _used += n + 3;
        }
        else
        {
            Bulk(text[..n]);
        }
    }

    /// <summary>Text for humans (INFO, CLIENT LIST): RESP3 verbatim "txt", RESP2 bulk.</summary>
    public void Verbatim(string text) => Verbatim(text.AsSpan());

    /// <summary>
    /// The builder's text without first copying it into a string (INFO, CLIENT INFO); a builder
    /// in several chunks (it grew while written) is copied once.
    /// </summary>
    public void Verbatim(StringBuilder text)
    {
        ReadOnlyMemory<char> only = default;
        int chunks = 0;
        foreach (var chunk in text.GetChunks())
        {
            only = chunk;
            chunks++;
        }
        if (chunks <= 1)
            Verbatim(only.Span);
        else
            Verbatim(text.ToString());
    }

    /// <summary>Text for humans from a span: RESP3 verbatim "txt", RESP2 bulk.</summary>
    public void Verbatim(ReadOnlySpan<char> text)
    {
        if (Protocol != 3)
        {
            Bulk(text);
            return;
        }
        if (Muted) return;
        int length = Encoding.UTF8.GetByteCount(text) + 4;
        Span<byte> span = Reserve(length + 16);
        int n = Header(span, (byte)'=', length);
        "txt:"u8.CopyTo(span[n..]);
        n += 4;
        n += Encoding.UTF8.GetBytes(text, span[n..]);
        span[n] = (byte)'\r';
        span[n + 1] = (byte)'\n';
        _used += n + 2;
    }

    /// <summary>Bytes already in RESP form.</summary>
    public void WriteRaw(ReadOnlySpan<byte> resp)
    {
        if (Muted) return;
        Span<byte> span = Reserve(resp.Length);
        resp.CopyTo(span);
        _used += resp.Length;
    }

    private void AggregateHeader(byte marker, long count)
    {
        if (Muted) return;
        Span<byte> span = Reserve(24);
        _used += Header(span, marker, count);
    }

    private void AsciiLine(byte marker, string text)
    {
        if (Muted) return;
        Span<byte> span = Reserve(Encoding.UTF8.GetMaxByteCount(text.Length) + 3);
        span[0] = marker;
        int n = Encoding.UTF8.GetBytes(text, span[1..]) + 1;
        // A reply line must not contain CR or LF; replace them as Redis does for error strings.
        for (int i = 1; i < n; i++)
            if (span[i] is (byte)'\r' or (byte)'\n')
                span[i] = (byte)' ';
        span[n] = (byte)'\r';
        span[n + 1] = (byte)'\n';
        _used += n + 2;
    }

    private static int Header(Span<byte> span, byte marker, long count)
    {
        span[0] = marker;
        Utf8Formatter.TryFormat(count, span[1..], out int n);
        span[n + 1] = (byte)'\r';
        span[n + 2] = (byte)'\n';
        return n + 3;
    }

    private void LargeBulk(ReadOnlySpan<byte> value)
    {
        Span<byte> header = Reserve(16);
        _used += Header(header, (byte)'$', value.Length);
        while (!value.IsEmpty)
        {
            Span<byte> span = Reserve(1);
            int n = Math.Min(span.Length, value.Length);
            value[..n].CopyTo(span);
            _used += n;
            value = value[n..];
        }
        WriteRaw("\r\n"u8);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private Span<byte> Reserve(int size)
    {
        if (_buffer.Length - _used < size)
            Refill(size);
        return _buffer.Span[_used..];
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Refill(int size)
    {
        Memory<byte> previous = _buffer;
        int previousUsed = _used;
        Commit();
        if (!_discarding && Guard is { } guard && !guard.MayBuffer(this))
            _discarding = true;
        int wanted = Math.Max(size, MinimumBuffer);
        if (_discarding)
        {
            if (_scratch is null || _scratch.Length < wanted)
                _scratch = new byte[wanted];
            _buffer = _scratch;
            return;
        }
        _buffer = _output.GetMemory(wanted);
        // The pipe hands out the rest of its current block when it is big enough: that is no new block.
        if (previousUsed >= previous.Length
            || !Unsafe.AreSame(ref previous.Span[previousUsed], ref System.Runtime.InteropServices.MemoryMarshal.GetReference(_buffer.Span)))
            _blocks++;
    }
}
