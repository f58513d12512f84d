using System.Text;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Persistence;
using Xunit;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The sorted set facade over both forms (<see cref="SortedSets"/>, <see cref="SortedSetView"/>):
/// random adds with ZADD's flags, removals, pops and range removals checked against a model after
/// every step, in a set that starts as a listpack and becomes a skip list exactly when a limit is
/// crossed; the listpack's bytes are validated by the RDB reader's <see cref="Listpack"/> and hold
/// each score as Redis stores it.
/// </summary>
public sealed unsafe class SortedSetFormsTests
{
    private static readonly SortedSetLimits Limits = new(24, 6);

    [Fact]
    public void RandomEditsMatchAModelAndConvertAtTheLimits()
    {
        var random = new Random(20261127);
        Span<byte> scratch = stackalloc byte[SortedSetCursor.Scratch];
        for (int round = 0; round < 40; round++)
        {
            var model = new Dictionary<string, double>(StringComparer.Ordinal);
            Entry* e = SortedSets.NewEntry("k"u8, 1, Limits);
            bool exceeded = false;
            try
            {
                Assert.Equal(ValueForm.Listpack, e->Form);
                for (int step = 0; step < 120; step++)
                {
                    int op = random.Next(10);
                    if (op < 6)
                    {
                        string member = RandomMember(random);
                        double score = RandomScore(random);
                        var flags = (SortedSetAddFlags)random.Next(32);
                        if ((flags & SortedSetAddFlags.Nx) != 0)
                            flags &= ~(SortedSetAddFlags.Xx | SortedSetAddFlags.Gt | SortedSetAddFlags.Lt);
                        if ((flags & SortedSetAddFlags.Gt) != 0)
                            flags &= ~SortedSetAddFlags.Lt;
                        var expected = ModelAdd(model, member, score, flags, out double expectedScore);
                        if (expected == SortedSetAddResult.Added && (model.Count > Limits.MaxEntries || member.Length > Limits.MaxValue))
                            exceeded = true;
                        var result = SortedSets.Add(e, score, Encoding.ASCII.GetBytes(member), flags, Limits, out double newScore);
                        Assert.Equal(expected, result);
                        if (result is SortedSetAddResult.Added or SortedSetAddResult.Updated or SortedSetAddResult.Unchanged)
                            Assert.Equal(expectedScore, newScore);
                    }
                    else if (op < 8 && model.Count > 0)
                    {
                        string member = random.Next(4) == 0 ? "absent" : model.Keys.ElementAt(random.Next(model.Count));
                        Assert.Equal(model.Remove(member), SortedSets.Remove(e, Encoding.ASCII.GetBytes(member)));
                    }
                    else if (op == 8 && model.Count > 0)
                    {
                        var view = SortedSetView.Of(e);
                        bool max = random.Next(2) == 0;
                        var at = max ? view.Last : view.First;
                        var sorted = Sorted(model);
                        var (member, score) = max ? sorted[^1] : sorted[0];
                        Assert.Equal(member, Encoding.ASCII.GetString(at.Member(scratch)));
                        Assert.Equal(score, at.Score);
                        SortedSets.RemoveAt(e, at);
                        model.Remove(member);
                    }
                    else if (model.Count > 0)
                    {
                        var sorted = Sorted(model);
                        int from = random.Next(sorted.Count);
                        int count = random.Next(sorted.Count - from + 1);
                        SortedSets.RemoveRun(e, SortedSetView.Of(e).AtRank(from), count);
                        foreach (var (member, _) in sorted.Skip(from).Take(count))
                            model.Remove(member);
                    }
                    Assert.Equal(exceeded ? ValueForm.Structure : ValueForm.Listpack, e->Form);
                    AssertSame(model, e);
                }
            }
            finally
            {
                EntryStore.Free(e);
            }
        }
    }

    [Fact]
    public void ScoresAreStoredAsRedisStoresThem()
    {
        Entry* e = SortedSets.NewEntry("k"u8, 1, SortedSetLimits.Default);
        try
        {
            foreach (var (member, score) in new[] { ("a", 1.0), ("b", -0.0), ("c", 1.5), ("d", double.PositiveInfinity), ("e", 1e-300), ("f", 1e19), ("i", 4611686018427387904.0), ("g", 0.1), ("h", 1e17) })
                SortedSets.Add(e, score, Encoding.ASCII.GetBytes(member), SortedSetAddFlags.None, SortedSetLimits.Default, out _);
            var stored = new List<string>();
            byte* lp = Values.Packed(e);
            Span<byte> scratch = stackalloc byte[24];
            for (int at = NativeListpack.First; !NativeListpack.IsEnd(lp, at); at = NativeListpack.Skip(lp, at))
            {
                var element = NativeListpack.Read(lp, at, out _);
                stored.Add((element.IsInteger ? "#" : "") + Encoding.ASCII.GetString(element.AsBytes(scratch)));
            }
            // -0 is the integer 0 (double2ll), 2^62 the last integral score held as an integer, 1e19 past it.
            Assert.Equal(["b", "#0", "e", "1e-300", "g", "0.10000000000000001", "a", "#1", "c", "1.5", "h", "#100000000000000000",
                "i", "#4611686018427387904", "f", "1e+19", "d", "inf"], stored);
            Assert.False(double.IsNegative(SortedSetView.Of(e).First.Score));
        }
        finally
        {
            EntryStore.Free(e);
        }
    }

    [Fact]
    public void PackBuildsTheListpackInsertsWouldBuild()
    {
        SortedSetValue* set = SortedSetValue.Create();
        Entry* e = SortedSets.NewEntry("k"u8, 1, SortedSetLimits.Default);
        try
        {
            for (int i = 0; i < 50; i++)
            {
                string member = i % 3 == 0 ? (i * 37).ToString() : "m" + i;
                double score = i % 4 == 0 ? i : i / 7.0 - 3;
                set->Add(Encoding.ASCII.GetBytes(member), score);
                SortedSets.Add(e, score, Encoding.ASCII.GetBytes(member), SortedSetAddFlags.None, SortedSetLimits.Default, out _);
            }
            byte* packed = (byte*)SortedSets.Pack(set, SortedSetLimits.Default, out var form);
            set = null;
            Assert.Equal(ValueForm.Listpack, form);
            Assert.True(NativeListpack.AsSpan(packed).SequenceEqual(NativeListpack.AsSpan(Values.Packed(e))));
            NativeListpack.Free(packed);

            SortedSetValue* big = SortedSets.SkipListOf(Values.Packed(e));
            Assert.True(SortedSets.Pack(big, new SortedSetLimits(49, 64), out form) == big);
            Assert.Equal(ValueForm.Structure, form);
            SortedSetValue.Destroy(big);
        }
        finally
        {
            if (set != null)
                SortedSetValue.Destroy(set);
            EntryStore.Free(e);
        }
    }

    private static SortedSetAddResult ModelAdd(Dictionary<string, double> model, string member, double score, SortedSetAddFlags flags, out double newScore)
    {
        newScore = score;
        if (!model.TryGetValue(member, out double current))
        {
            if ((flags & SortedSetAddFlags.Xx) != 0)
                return SortedSetAddResult.Skipped;
            model[member] = score;
            return SortedSetAddResult.Added;
        }
        if ((flags & SortedSetAddFlags.Nx) != 0)
            return SortedSetAddResult.Skipped;
        if ((flags & SortedSetAddFlags.Incr) != 0)
        {
            score += current;
            if (double.IsNaN(score))
                return SortedSetAddResult.NotANumber;
        }
        if (((flags & SortedSetAddFlags.Lt) != 0 && score >= current) || ((flags & SortedSetAddFlags.Gt) != 0 && score <= current))
            return SortedSetAddResult.Skipped;
        newScore = score;
        if (score == current)
            return SortedSetAddResult.Unchanged;
        model[member] = score;
        return SortedSetAddResult.Updated;
    }

    private static List<(string Member, double Score)> Sorted(Dictionary<string, double> model)
        => [.. model.Select(p => (p.Key, StoredScore(p.Value))).OrderBy(p => p.Item2).ThenBy(p => p.Key, StringComparer.Ordinal)];

    /// <summary>-0 reads back as 0 from a listpack (stored as an integer); equal for ordering either way.</summary>
    private static double StoredScore(double score) => score == 0 ? 0 : score;

    private static void AssertSame(Dictionary<string, double> model, Entry* e)
    {
        var view = SortedSetView.Of(e);
        Assert.Equal(model.Count, view.Count);
        Assert.Equal(model.Count, Values.Length(e));
        var expected = Sorted(model);
        var actual = new List<(string, double)>();
        Span<byte> scratch = stackalloc byte[SortedSetCursor.Scratch];
        for (var at = view.First; !at.IsEnd; at = at.Next)
            actual.Add((Encoding.ASCII.GetString(at.Member(scratch)), StoredScore(at.Score)));
        Assert.Equal(expected, actual);
        var backwards = new List<(string, double)>();
        for (var at = view.Last; !at.IsEnd; at = at.Previous)
            backwards.Insert(0, (Encoding.ASCII.GetString(at.Member(scratch)), StoredScore(at.Score)));
        Assert.Equal(expected, backwards);
        for (int rank = 0; rank < expected.Count; rank++)
        {
            Assert.Equal(rank, view.RankOf(Encoding.ASCII.GetBytes(expected[rank].Member), reverse: false, out double score));
            Assert.Equal(expected[rank].Score, StoredScore(score));
            Assert.Equal(expected.Count - 1 - rank, view.RankOf(Encoding.ASCII.GetBytes(expected[rank].Member), reverse: true, out _));
            Assert.Equal(expected[rank].Member, Encoding.ASCII.GetString(view.AtRank(rank).Member(scratch)));
        }
        var range = new ScoreRange(-1, 1, minExclusive: false, maxExclusive: true);
        Assert.Equal(expected.Count(p => p.Score >= -1 && p.Score < 1), view.CountIn(range));
        if (e->Form == ValueForm.Listpack)
        {
            var reader = new Listpack(NativeListpack.AsSpan(Values.Packed(e)));
            int elements = 0;
            while (reader.Next(out _))
                elements++;
            Assert.Equal(2 * model.Count, elements);
        }
    }

    private static string RandomMember(Random random) => random.Next(12) switch
    {
        0 => "long-member-" + random.Next(100),
        1 => random.Next(-300, 300).ToString(),
        2 => "",
        _ => ((char)('a' + random.Next(26))).ToString() + random.Next(3),
    };

    private static double RandomScore(Random random) => random.Next(8) switch
    {
        0 => random.Next(-5, 5),
        1 => random.Next(3) - 1.5,
        2 => double.PositiveInfinity,
        3 => double.NegativeInfinity,
        4 => -0.0,
        5 => random.NextDouble() * 1e-300,
        _ => Math.Round(random.NextDouble() * 10, 2),
    };
}
