using System.Buffers;
using System.Collections.Concurrent;

namespace Diagnostics.Server.Network;

/// <summary>
/// The blocks connections' output pipes write replies into. Pipelines would otherwise rent each
/// block from the shared array pool, which keeps only a few dozen arrays of a size per core: a
/// deep pipeline of long replies (LRANGE_600 at -P 30 is 4.7 MB per flush, ~290 blocks) then
/// allocated most of its blocks afresh, tens of kilobytes of garbage per command. This pool keeps
/// up to <see cref="MaxRetainedBlocks"/> blocks for reuse and lets the rest go to the GC.
/// Written by hand because the runtime's pinned block pool (Kestrel's) is internal.
/// </summary>
public sealed class ReplyBufferPool : MemoryPool<byte>
{
    public const int BlockSize = 64 * 1024;
    /// <summary>16 MB: a few such flushes at once from the pool, as many as the cores run.</summary>
    public const int MaxRetainedBlocks = 256;

    private readonly ConcurrentQueue<Block> _free = new();
    private int _freeCount;

    /// <summary>The one pool every socket connection writes into.</summary>
    public static ReplyBufferPool Connections { get; } = new();

    public override int MaxBufferSize => BlockSize;

    /// <summary>Blocks kept for reuse now, for INFO and the studio's memory view.</summary>
    public long RetainedBytes => (long)Volatile.Read(ref _freeCount) * BlockSize;

    public override IMemoryOwner<byte> Rent(int minBufferSize = -1)
    {
        if (minBufferSize > BlockSize)
            throw new ArgumentOutOfRangeException(nameof(minBufferSize), minBufferSize, $"blocks are {BlockSize} bytes");
        if (_free.TryDequeue(out var block))
        {
            Interlocked.Decrement(ref _freeCount);
            block.Rented = true;
            return block;
        }
        return new Block(this);
    }

    private void Return(Block block)
    {
        if (Volatile.Read(ref _freeCount) >= MaxRetainedBlocks)
            return; // beyond what is kept: the GC has it
        Interlocked.Increment(ref _freeCount);
        _free.Enqueue(block);
    }

    protected override void Dispose(bool disposing) { }

    private sealed class Block(ReplyBufferPool pool) : IMemoryOwner<byte>
    {
        private readonly byte[] _array = GC.AllocateUninitializedArray<byte>(BlockSize);

        public bool Rented { get; set; } = true;

        public Memory<byte> Memory => _array;

        public void Dispose()
        {
            // A pipe disposes each block once; the flag makes a second return harmless all the same.
            if (!Rented)
                return;
            Rented = false;
            pool.Return(this);
        }
    }
}
