using System.Globalization;
using System.Text;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.Engine;
using Xunit;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The set facade on a detached entry: random adds and removes against a model, with the form
/// checked against Redis 7.2's rules at every step (intset while all integers and few, listpack
/// while small, hash table after, never back), and every read (count, membership, members,
/// random picks) the same whatever the form.
/// </summary>
public sealed unsafe class SetsTests
{
    private static readonly SetLimits Limits = new(IntsetEntries: 20, ListpackEntries: 12, ListpackValue: 8);

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public void FormsFollowRedisRulesAndReadsAgree(int seed)
    {
        var random = new Random(seed);
        for (int round = 0; round < 200; round++)
        {
            var model = new HashSet<string>(StringComparer.Ordinal);
            string first = Member(random);
            Entry* e = Sets.NewEntry("k"u8, Bytes(first), 1, Limits);
            ValueForm expected = IsInteger(first) ? ValueForm.Intset : ValueForm.Listpack;
            Assert.Equal(expected, e->Form);
            try
            {
                int steps = random.Next(1, 40);
                for (int step = 0; step < steps; step++)
                {
                    string member = random.Next(4) == 0 && model.Count > 0 ? model.ElementAt(random.Next(model.Count)) : Member(random);
                    if (random.Next(4) == 0)
                    {
                        Assert.Equal(model.Remove(member), Sets.Remove(e, Bytes(member)));
                    }
                    else
                    {
                        bool added = model.Add(member);
                        Assert.Equal(added, Sets.Add(e, Bytes(member), Limits));
                        if (added)
                            expected = Next(expected, model, member);
                    }
                    Assert.Equal(expected, e->Form);
                    AssertSame(model, e, random);
                }
            }
            finally
            {
                EntryStore.Free(e);
            }
        }
    }

    /// <summary>The form after adding <paramref name="member"/> (setTypeAddAux).</summary>
    private static ValueForm Next(ValueForm form, HashSet<string> model, string member)
    {
        int before = model.Count - 1;
        switch (form)
        {
            case ValueForm.Intset when IsInteger(member):
                return model.Count > Limits.IntsetEntries ? ValueForm.Structure : ValueForm.Intset;
            case ValueForm.Intset:
                int widest = model.Where(IsInteger).Select(m => m.Length).DefaultIfEmpty(0).Max();
                return before < Limits.ListpackEntries && member.Length <= Limits.ListpackValue && widest <= Limits.ListpackValue ? ValueForm.Listpack : ValueForm.Structure;
            case ValueForm.Listpack:
                return before < Limits.ListpackEntries && member.Length <= Limits.ListpackValue ? ValueForm.Listpack : ValueForm.Structure;
            default:
                return ValueForm.Structure;
        }
    }

    private static void AssertSame(HashSet<string> model, Entry* e, Random random)
    {
        Assert.Equal(model.Count, Sets.Count(e));
        Assert.Equal(model.Count, Values.Length(e));
        var members = new List<string>();
        foreach (ReadOnlySpan<byte> member in Sets.Members(e))
            members.Add(Encoding.ASCII.GetString(member));
        Assert.Equal(model.Order(StringComparer.Ordinal), members.Order(StringComparer.Ordinal));
        if (e->Form == ValueForm.Intset)
            Assert.Equal(members.Select(long.Parse).Order(), members.Select(long.Parse)); // ascending, as Redis replies an intset
        foreach (string member in model)
        {
            Assert.True(Sets.Contains(e, Bytes(member)));
            if (long.TryParse(member, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long n) && IsInteger(member))
                Assert.True(Sets.ContainsInteger(e, n));
        }
        Assert.False(Sets.Contains(e, "absent"u8));
        Assert.False(Sets.Contains(e, "999999"u8));
        if (model.Count > 0)
        {
            Span<byte> scratch = stackalloc byte[Sets.IntegerTextMax];
            Assert.Contains(Encoding.ASCII.GetString(Sets.RandomMember(e, random, scratch)), model);
        }
    }

    [Fact]
    public void IntsetOfIntegersOnlyFromAnyForm()
    {
        Entry* e = Sets.NewEntry("k"u8, ValueForm.Listpack);
        try
        {
            foreach (string m in new[] { "5", "-3", "100" })
                Sets.Add(e, Bytes(m), Limits);
            Assert.Equal(ValueForm.Listpack, e->Form);
            Sets.MaybeConvertToIntset(e, Limits);
            Assert.Equal(ValueForm.Intset, e->Form);
            var members = new List<string>();
            foreach (ReadOnlySpan<byte> member in Sets.Members(e))
                members.Add(Encoding.ASCII.GetString(member));
            Assert.Equal(["-3", "5", "100"], members);
            Sets.ConvertToTable(e);
            Assert.Equal(ValueForm.Structure, e->Form);
            Assert.True(Sets.Contains(e, "100"u8));
            Sets.MaybeConvert(e, 1000, Limits);
            Assert.Equal(ValueForm.Structure, e->Form);
        }
        finally
        {
            EntryStore.Free(e);
        }
    }

    private static string Member(Random random) => random.Next(5) switch
    {
        0 or 1 => random.Next(-300, 300).ToString(CultureInfo.InvariantCulture),
        2 => random.NextInt64(long.MinValue, long.MaxValue).ToString(CultureInfo.InvariantCulture),
        3 => "s" + random.Next(40),
        _ => new string('x', random.Next(1, 12)),
    };

    private static bool IsInteger(string text) => Protocol.NumberFormat.TryParseInt64(Bytes(text), out _);

    private static byte[] Bytes(string text) => Encoding.ASCII.GetBytes(text);
}
