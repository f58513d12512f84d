using System.Buffers;

namespace Diagnostics.Fuzz.Targets;

/// <summary>One network read in a multi-segment sequence, as a pipe hands the parser several reads at once.</summary>
public sealed class SequenceChunk : ReadOnlySequenceSegment<byte>
{
    public SequenceChunk(ReadOnlyMemory<byte> memory) => Memory = memory;

    public SequenceChunk Append(ReadOnlyMemory<byte> memory)
    {
        var next = new SequenceChunk(memory) { RunningIndex = RunningIndex + Memory.Length };
        Next = next;
        return next;
    }

    /// <summary>The chunks as one sequence; an empty list is an empty sequence.</summary>
    public static ReadOnlySequence<byte> Join(List<ReadOnlyMemory<byte>> chunks)
    {
        if (chunks.Count == 0)
            return ReadOnlySequence<byte>.Empty;
        if (chunks.Count == 1)
            return new ReadOnlySequence<byte>(chunks[0]);
        var first = new SequenceChunk(chunks[0]);
        var last = first;
        for (int i = 1; i < chunks.Count; i++)
            last = last.Append(chunks[i]);
        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }
}
