using System.Buffers.Text;
using System.Runtime.CompilerServices;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// Commands encoded as RESP multibulk, the way the AOF stores them, in one growable block of
/// tracked native memory. Each stretch of records carries the database it applies to, so whoever
/// copies the buffer into the file can put a SELECT in front when the file's database differs.
/// A connection keeps one for the commands of its current batch; the AOF keeps the shared ones.
/// </summary>
public sealed unsafe class AofRecordBuffer : Engine.ICommandPropagation, IDisposable
{
    private const int InitialCapacity = 4096;
    // A buffer that grew past this for one huge command is given back instead of kept.
    private const int RetainedCapacity = 1024 * 1024;

    private static readonly byte[][] s_selects = new byte[16][];

    /// <summary>SELECT database, encoded once per database number (the AOF and the replication stream put it in front of a run).</summary>
    public static byte[] SelectCommand(int database)
    {
        if (database < s_selects.Length && s_selects[database] is { } cached)
            return cached;
        string digits = database.ToString(System.Globalization.CultureInfo.InvariantCulture);
        byte[] bytes = System.Text.Encoding.ASCII.GetBytes($"*2\r\n$6\r\nSELECT\r\n${digits.Length}\r\n{digits}\r\n");
        if (database < s_selects.Length)
            s_selects[database] = bytes;
        return bytes;
    }

    private byte* _data;
    private int _capacity;
    private int _length;
    private DatabaseRun[] _runs = new DatabaseRun[4];
    private int _runCount;

    public int Length => _length;
    public bool IsEmpty => _length == 0;
    public ReadOnlySpan<byte> Span => new(_data, _length);
    public int RunCount => _runCount;

    /// <summary>Database and byte range of run <paramref name="index"/>.</summary>
    public (int Database, int Start, int End) Run(int index)
    {
        int start = index == 0 ? 0 : _runs[index - 1].End;
        return (_runs[index].Database, start, _runs[index].End);
    }

    /// <summary>Starts a command of <paramref name="argCount"/> arguments that applies to <paramref name="database"/>.</summary>
    public void BeginCommand(int database, int argCount)
    {
        if (_runCount == 0 || _runs[_runCount - 1].Database != database)
        {
            if (_runCount == _runs.Length)
                Array.Resize(ref _runs, _runs.Length * 2);
            _runs[_runCount++] = new DatabaseRun(database, _length);
        }
        Header((byte)'*', argCount);
    }

    /// <summary>Ends the command begun by <see cref="BeginCommand"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void EndCommand() => _runs[_runCount - 1].End = _length;

    public void Argument(ReadOnlySpan<byte> value)
    {
        Header((byte)'$', value.Length);
        Ensure(value.Length + 2);
        value.CopyTo(new Span<byte>(_data + _length, value.Length));
        _length += value.Length;
        _data[_length++] = (byte)'\r';
        _data[_length++] = (byte)'\n';
    }

    public void Argument(long value)
    {
        Span<byte> digits = stackalloc byte[20];
        Utf8Formatter.TryFormat(value, digits, out int written);
        Argument(digits[..written]);
    }

    /// <summary>Appends raw bytes that belong to the current run (already-encoded commands).</summary>
    public void AppendRaw(ReadOnlySpan<byte> bytes)
    {
        Ensure(bytes.Length);
        bytes.CopyTo(new Span<byte>(_data + _length, bytes.Length));
        _length += bytes.Length;
        if (_runCount > 0)
            _runs[_runCount - 1].End = _length;
    }

    private void Header(byte prefix, int count)
    {
        Ensure(1 + 11 + 2);
        _data[_length++] = prefix;
        Utf8Formatter.TryFormat(count, new Span<byte>(_data + _length, 11), out int written);
        _length += written;
        _data[_length++] = (byte)'\r';
        _data[_length++] = (byte)'\n';
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Ensure(int extra)
    {
        if (_length + extra > _capacity)
            Grow(extra);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Grow(int extra) => _data = TrackedAllocator.GrowDoubling(_data, ref _capacity, (long)_length + extra, InitialCapacity, "AOF record buffer");

    /// <summary>A position in the buffer to come back to (an EXEC that wrote nothing drops its MULTI).</summary>
    public readonly record struct Checkpoint(int Length, int RunCount, int LastRunEnd);

    public Checkpoint Save() => new(_length, _runCount, _runCount > 0 ? _runs[_runCount - 1].End : 0);

    /// <summary>Forgets everything written since <paramref name="checkpoint"/>.</summary>
    public void Restore(Checkpoint checkpoint)
    {
        _length = checkpoint.Length;
        _runCount = checkpoint.RunCount;
        if (_runCount > 0)
            _runs[_runCount - 1].End = checkpoint.LastRunEnd;
    }

    /// <summary>
    /// Wraps what was written since <paramref name="start"/> in MULTI/EXEC (a script's effects: the
    /// replay applies them whole or not at all). MULTI goes in front of the first command, in its
    /// database's stretch; EXEC after the last, in the last one's, so neither adds a SELECT.
    /// </summary>
    public void WrapInMultiExec(Checkpoint start)
    {
        ReadOnlySpan<byte> multi = "*1\r\n$5\r\nMULTI\r\n"u8;
        if (start.Length == _length)
            return;
        Ensure(multi.Length);
        new Span<byte>(_data + start.Length, _length - start.Length).CopyTo(new Span<byte>(_data + start.Length + multi.Length, _length - start.Length));
        multi.CopyTo(new Span<byte>(_data + start.Length, multi.Length));
        _length += multi.Length;
        for (int i = 0; i < _runCount; i++)
            if (_runs[i].End > start.Length)
                _runs[i].End += multi.Length;
        BeginCommand(_runs[_runCount - 1].Database, 1);
        Argument("EXEC"u8);
        EndCommand();
    }

    /// <summary>Empties the buffer, keeping its memory unless one huge command inflated it.</summary>
    public void Clear()
    {
        _length = 0;
        _runCount = 0;
        if (_capacity > RetainedCapacity)
            Release();
    }

    /// <summary>
    /// Tracked bytes held (INFO memory mem_aof_buffer, and what maxmemory leaves out): the block's
    /// charge, not the capacity asked for. They differ by megabytes for a big buffer under an
    /// allocator with coarse large classes (mimalloc), and eviction must subtract exactly what the
    /// total counts, or it empties the keyspace trying to free memory that is the buffer's.
    /// </summary>
    public long CapacityBytes => _data == null ? 0 : TrackedAllocator.ChargedSize(_data);

    private void Release()
    {
        if (_data != null)
            TrackedAllocator.Free(_data);
        _data = null;
        _capacity = 0;
    }

    public void Dispose()
    {
        Release();
        _length = 0;
        _runCount = 0;
    }

    private struct DatabaseRun(int database, int end)
    {
        public readonly int Database = database;
        public int End = end;
    }
}
