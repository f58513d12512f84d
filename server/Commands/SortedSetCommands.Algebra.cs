using System.Buffers;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Commands;

/// <summary>ZUNION, ZINTER, ZDIFF, their STORE forms, and ZINTERCARD.</summary>
public static unsafe partial class SortedSetCommands
{
    private enum SetOperation { Union, Intersection, Difference }
    private enum Aggregate { Sum, Min, Max }

    /// <summary>One input: a sorted set (either form), or a plain set whose members all score 1; neither when the key is missing.</summary>
    private readonly struct Input(SortedSetView sorted, Entry* plain, double weight)
    {
        public readonly SortedSetView Sorted = sorted;
        /// <summary>A plain set's entry (any of its forms, read through <see cref="Sets"/>).</summary>
        public readonly Entry* Plain = plain;
        public readonly double Weight = weight;

        public bool Missing => !Sorted.Exists && Plain == null;
        public long Count => Sorted.Exists ? Sorted.Count : Plain != null ? Sets.Count(Plain) : 0;

        public bool TryGetScore(ReadOnlySpan<byte> member, out double score)
        {
            if (Sorted.Exists)
                return Sorted.TryGetScore(member, out score);
            score = 1;
            return Plain != null && Sets.Contains(Plain, member);
        }
    }

    private static void ZUnion(ref CommandContext c) => Algebra(ref c, SetOperation.Union, 1, store: false);
    private static void ZInter(ref CommandContext c) => Algebra(ref c, SetOperation.Intersection, 1, store: false);
    private static void ZDiff(ref CommandContext c) => Algebra(ref c, SetOperation.Difference, 1, store: false);
    private static void ZUnionStore(ref CommandContext c) => Algebra(ref c, SetOperation.Union, 2, store: true);
    private static void ZInterStore(ref CommandContext c) => Algebra(ref c, SetOperation.Intersection, 2, store: true);
    private static void ZDiffStore(ref CommandContext c) => Algebra(ref c, SetOperation.Difference, 2, store: true);

    /// <summary>Reads numkeys at <paramref name="index"/> with the algebra commands' errors.</summary>
    private static bool TryInputCount(ref CommandContext c, int index, out int numKeys)
    {
        numKeys = 0;
        if (!c.TryInt64(index, out long value))
            return false;
        if (value < 1)
        {
            c.Error($"ERR at least 1 input key is needed for '{c.Spec.Name}' command");
            return false;
        }
        if (value > c.ArgCount - index - 1)
        {
            c.SyntaxError();
            return false;
        }
        numKeys = (int)value;
        return true;
    }

    private static void Algebra(ref CommandContext c, SetOperation operation, int countIndex, bool store)
    {
        if (!TryInputCount(ref c, countIndex, out int numKeys))
            return;
        int firstKey = countIndex + 1;
        double[] weights = ArrayPool<double>.Shared.Rent(numKeys);
        nint[] inputs = ArrayPool<nint>.Shared.Rent(numKeys * InputSlots);
        try
        {
            weights.AsSpan(0, numKeys).Fill(1);
            var aggregate = Aggregate.Sum;
            bool withScores = false;
            for (int i = firstKey + numKeys; i < c.ArgCount; i++)
            {
                if (operation != SetOperation.Difference && c.ArgIs(i, "weights"u8) && i + numKeys < c.ArgCount)
                {
                    for (int w = 0; w < numKeys; w++)
                    {
                        if (!NumberFormat.TryParseDouble(c.Arg(i + 1 + w), out weights[w]))
                        {
                            c.Error("ERR weight value is not a float");
                            return;
                        }
                    }
                    i += numKeys;
                }
                else if (operation != SetOperation.Difference && c.ArgIs(i, "aggregate"u8) && i + 1 < c.ArgCount)
                {
                    i++;
                    if (c.ArgIs(i, "sum"u8)) aggregate = Aggregate.Sum;
                    else if (c.ArgIs(i, "min"u8)) aggregate = Aggregate.Min;
                    else if (c.ArgIs(i, "max"u8)) aggregate = Aggregate.Max;
                    else
                    {
                        c.SyntaxError();
                        return;
                    }
                }
                else if (!store && c.ArgIs(i, "withscores"u8))
                {
                    withScores = true;
                }
                else
                {
                    c.SyntaxError();
                    return;
                }
            }
            if (!TryInputs(ref c, firstKey, numKeys, weights, inputs))
                return;
            SortedSetValue* result = Compute(operation, aggregate, inputs, numKeys);
            try
            {
                if (store)
                {
                    long size = result->Count;
                    StoreResult(ref c, c.Arg(1), result);
                    result = null;
                    c.Reply.Integer(size);
                    return;
                }
                var nodes = new NodeBuffer((int)Math.Min(result->Count, 1 << 20));
                try
                {
                    for (SkipNode* node = SortedSetValue.ListOf(result)->First; node != null; node = SkipNode.Next(node))
                        nodes.Add((nint)node);
                    if (withScores)
                        WriteWithScores(c.Reply, SortedSetView.Of(result), nodes.Items);
                    else
                        WriteMembers(c.Reply, SortedSetView.Of(result), nodes.Items);
                }
                finally
                {
                    nodes.Dispose();
                }
            }
            finally
            {
                if (result != null)
                    SortedSetValue.Destroy(result);
            }
        }
        finally
        {
            ArrayPool<double>.Shared.Return(weights);
            ArrayPool<nint>.Shared.Return(inputs);
        }
    }

    /// <summary>Slots per input in the inputs array: sorted-set entry, set, weight bits.</summary>
    private const int InputSlots = 3;

    /// <summary>
    /// Looks the inputs up (sorted sets or sets, else WRONGTYPE) into <paramref name="inputs"/>,
    /// <see cref="InputSlots"/> per input: sorted-set entry, set, weight bits. False after an error reply.
    /// </summary>
    private static bool TryInputs(ref CommandContext c, int firstKey, int numKeys, double[] weights, nint[] inputs)
    {
        for (int i = 0; i < numKeys; i++)
        {
            Entry* e = c.Read(c.Arg(firstKey + i), out _);
            inputs[InputSlots * i] = inputs[InputSlots * i + 1] = 0;
            inputs[InputSlots * i + 2] = (nint)BitConverter.DoubleToInt64Bits(weights[i]);
            if (e == null)
                continue;
            if (e->Type == Engine.ValueType.SortedSet)
                inputs[InputSlots * i] = (nint)e;
            else if (e->Type == Engine.ValueType.Set)
                inputs[InputSlots * i + 1] = (nint)e;
            else
            {
                c.WrongType();
                return false;
            }
        }
        return true;
    }

    private static Input InputAt(nint[] inputs, int i)
        => new(SortedSetView.Of((Entry*)inputs[InputSlots * i]), (Entry*)inputs[InputSlots * i + 1], BitConverter.Int64BitsToDouble(inputs[InputSlots * i + 2]));

    /// <summary>A weighted score; NaN (0 times infinity) counts as 0, as in Redis.</summary>
    private static double Weighted(double score, double weight)
    {
        double value = score * weight;
        return double.IsNaN(value) ? 0 : value;
    }

    private static double Combine(double current, double value, Aggregate aggregate)
    {
        switch (aggregate)
        {
            case Aggregate.Min:
                return Math.Min(current, value);
            case Aggregate.Max:
                return Math.Max(current, value);
            default:
                double sum = current + value;
                // +inf plus -inf: Redis takes 0 rather than store a NaN score.
                return double.IsNaN(sum) ? 0 : sum;
        }
    }

    /// <summary>The result as a new sorted set; the caller stores or destroys it.</summary>
    private static SortedSetValue* Compute(SetOperation operation, Aggregate aggregate, nint[] inputs, int count)
    {
        SortedSetValue* result = SortedSetValue.Create();
        Span<byte> scratch = stackalloc byte[SortedSetCursor.Scratch];
        switch (operation)
        {
            case SetOperation.Union:
                for (int i = 0; i < count; i++)
                {
                    var input = InputAt(inputs, i);
                    if (input.Sorted.Exists)
                        for (var at = input.Sorted.First; !at.IsEnd; at = at.Next)
                            Accumulate(result, at.Member(scratch), Weighted(at.Score, input.Weight), aggregate);
                    else if (input.Plain != null)
                        foreach (ReadOnlySpan<byte> member in Sets.Members(input.Plain))
                            Accumulate(result, member, Weighted(1, input.Weight), aggregate);
                }
                break;
            case SetOperation.Intersection:
            {
                int smallest = 0;
                for (int i = 0; i < count; i++)
                {
                    var input = InputAt(inputs, i);
                    if (input.Missing)
                        return result;
                    if (input.Count < InputAt(inputs, smallest).Count)
                        smallest = i;
                }
                var first = InputAt(inputs, smallest);
                if (first.Sorted.Exists)
                    for (var at = first.Sorted.First; !at.IsEnd; at = at.Next)
                        Intersect(result, inputs, count, smallest, at.Member(scratch), at.Score, aggregate);
                else
                    foreach (ReadOnlySpan<byte> member in Sets.Members(first.Plain))
                        Intersect(result, inputs, count, smallest, member, 1, aggregate);
                break;
            }
            case SetOperation.Difference:
            {
                var first = InputAt(inputs, 0);
                if (first.Sorted.Exists)
                    for (var at = first.Sorted.First; !at.IsEnd; at = at.Next)
                        Subtract(result, inputs, count, at.Member(scratch), at.Score);
                else if (first.Plain != null)
                    foreach (ReadOnlySpan<byte> member in Sets.Members(first.Plain))
                        Subtract(result, inputs, count, member, 1);
                break;
            }
        }
        return result;
    }

    private static void Accumulate(SortedSetValue* result, ReadOnlySpan<byte> member, double value, Aggregate aggregate)
    {
        if (result->TryGetScore(member, out double current))
            result->Rescore(member, Combine(current, value, aggregate));
        else
            result->Add(member, value);
    }

    private static void Intersect(SortedSetValue* result, nint[] inputs, int count, int smallest, ReadOnlySpan<byte> member, double score, Aggregate aggregate)
    {
        double value = Weighted(score, InputAt(inputs, smallest).Weight);
        for (int i = 0; i < count; i++)
        {
            if (i == smallest)
                continue;
            var input = InputAt(inputs, i);
            if (!input.TryGetScore(member, out double other))
                return;
            value = Combine(value, Weighted(other, input.Weight), aggregate);
        }
        result->Add(member, value);
    }

    private static void Subtract(SortedSetValue* result, nint[] inputs, int count, ReadOnlySpan<byte> member, double score)
    {
        for (int i = 1; i < count; i++)
            if (InputAt(inputs, i).TryGetScore(member, out _))
                return;
        result->Add(member, score);
    }

    /// <summary>ZINTERCARD numkeys key [key ...] [LIMIT limit]: the intersection's size, counting stops at the limit.</summary>
    private static void ZInterCard(ref CommandContext c)
    {
        if (!TryInputCount(ref c, 1, out int numKeys))
            return;
        if (!SetCommands.TryCardinalityLimit(ref c, 2 + numKeys, out long limit))
            return;
        double[] weights = ArrayPool<double>.Shared.Rent(numKeys);
        nint[] inputs = ArrayPool<nint>.Shared.Rent(numKeys * InputSlots);
        try
        {
            weights.AsSpan(0, numKeys).Fill(1);
            if (!TryInputs(ref c, 2, numKeys, weights, inputs))
                return;
            int smallest = 0;
            for (int i = 0; i < numKeys; i++)
            {
                if (InputAt(inputs, i).Missing)
                {
                    c.Reply.Integer(0);
                    return;
                }
                if (InputAt(inputs, i).Count < InputAt(inputs, smallest).Count)
                    smallest = i;
            }
            long found = 0;
            var first = InputAt(inputs, smallest);
            if (first.Sorted.Exists)
            {
                Span<byte> scratch = stackalloc byte[SortedSetCursor.Scratch];
                for (var at = first.Sorted.First; !at.IsEnd && (limit == 0 || found < limit); at = at.Next)
                    if (InAll(inputs, numKeys, smallest, at.Member(scratch)))
                        found++;
            }
            else
            {
                foreach (ReadOnlySpan<byte> member in Sets.Members(first.Plain))
                {
                    if (limit != 0 && found >= limit)
                        break;
                    if (InAll(inputs, numKeys, smallest, member))
                        found++;
                }
            }
            c.Reply.Integer(found);
        }
        finally
        {
            ArrayPool<double>.Shared.Return(weights);
            ArrayPool<nint>.Shared.Return(inputs);
        }
    }

    private static bool InAll(nint[] inputs, int count, int except, ReadOnlySpan<byte> member)
    {
        for (int i = 0; i < count; i++)
            if (i != except && !InputAt(inputs, i).TryGetScore(member, out _))
                return false;
        return true;
    }
}
