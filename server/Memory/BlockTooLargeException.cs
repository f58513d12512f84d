namespace Diagnostics.Server.Memory;

/// <summary>
/// A request for a block larger than the allocator serves (its header records sizes in 32 bits).
/// Not an <see cref="OutOfMemoryException"/>: the process is fine, one command asked too much,
/// and that command gets an error reply.
/// </summary>
public sealed class BlockTooLargeException(long requested)
    : Exception($"a single value of {requested} bytes exceeds the largest block ({TrackedAllocator.MaxBlockBytes} bytes)")
{
    public long Requested { get; } = requested;
}
