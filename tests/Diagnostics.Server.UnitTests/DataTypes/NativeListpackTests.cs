using System.Text;
using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.Persistence;
using Xunit;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The listpack editing operations small hashes, sets and sorted sets are built on, checked
/// against a plain list after every step, with the block read back by the RDB reader's validating
/// <see cref="Listpack"/> (total bytes, terminator, every element's header and back-length).
/// </summary>
public sealed unsafe class NativeListpackTests
{
    [Fact]
    public void RandomEditsKeepTheBlockValidAndEqualToAModel()
    {
        var random = new Random(20261127);
        var model = new List<string>();
        byte* lp = NativeListpack.Create(0);
        try
        {
            for (int step = 0; step < 4000; step++)
            {
                int op = random.Next(10);
                if (op < 4 || model.Count == 0)
                {
                    int index = random.Next(model.Count + 1);
                    string text = RandomElement(random);
                    int offset = index == model.Count ? NativeListpack.Bytes(lp) - 1 : NativeListpack.Seek(lp, index);
                    lp = NativeListpack.InsertString(lp, offset, Encoding.ASCII.GetBytes(text));
                    model.Insert(index, text);
                }
                else if (op < 6)
                {
                    int index = random.Next(model.Count);
                    string text = RandomElement(random);
                    lp = NativeListpack.ReplaceString(lp, NativeListpack.Seek(lp, index - model.Count), Encoding.ASCII.GetBytes(text));
                    model[index] = text;
                }
                else if (op < 8)
                {
                    int index = random.Next(model.Count);
                    int count = Math.Min(model.Count - index, 1 + random.Next(3));
                    lp = NativeListpack.Delete(lp, NativeListpack.Seek(lp, index), count);
                    model.RemoveRange(index, count);
                }
                else
                {
                    string wanted = model[random.Next(model.Count)];
                    int found = NativeListpack.Find(lp, NativeListpack.First, Encoding.ASCII.GetBytes(wanted), 0);
                    Assert.Equal(NativeListpack.Seek(lp, model.IndexOf(wanted)), found);
                    Assert.Equal(-1, NativeListpack.Find(lp, NativeListpack.First, "absent-element"u8, 0));
                }
                AssertSame(model, lp);
            }
        }
        finally
        {
            NativeListpack.Free(lp);
        }
    }

    [Fact]
    public void IntegersAreStoredAsRedisStoresThemAndFoundByText()
    {
        byte* lp = NativeListpack.Create(0);
        try
        {
            string[] texts = ["0", "127", "-1", "4095", "-4096", "32767", "-32768", "8388607", "-8388608", "2147483647", "-2147483648", "9223372036854775807", "-9223372036854775808", "007", "+5", "-0", "1e3", "18446744073709551616"];
            foreach (string text in texts)
                lp = NativeListpack.InsertString(lp, NativeListpack.Bytes(lp) - 1, Encoding.ASCII.GetBytes(text));
            int offset = NativeListpack.First;
            foreach (string text in texts)
            {
                var element = NativeListpack.Read(lp, offset, out int next);
                bool canonical = text is not ("007" or "+5" or "-0" or "1e3" or "18446744073709551616");
                Assert.Equal(canonical, element.IsInteger);
                Assert.Equal(text.Length, element.TextLength);
                Assert.Equal(offset, NativeListpack.Find(lp, NativeListpack.First, Encoding.ASCII.GetBytes(text), 0));
                offset = next;
            }
            Assert.Equal(texts.Length, NativeListpack.Count(lp));
        }
        finally
        {
            NativeListpack.Free(lp);
        }
    }

    [Fact]
    public void FindWithSkipLooksOnlyAtEveryOtherElement()
    {
        byte* lp = NativeListpack.Create(0);
        try
        {
            // field, value pairs where a value equals a later field: only fields may match.
            foreach (string text in new[] { "a", "b", "b", "c", "c", "d" })
                lp = NativeListpack.InsertString(lp, NativeListpack.Bytes(lp) - 1, Encoding.ASCII.GetBytes(text));
            Assert.Equal(NativeListpack.Seek(lp, 2), NativeListpack.Find(lp, NativeListpack.First, "b"u8, 1));
            Assert.Equal(-1, NativeListpack.Find(lp, NativeListpack.First, "d"u8, 1));
        }
        finally
        {
            NativeListpack.Free(lp);
        }
    }

    [Fact]
    public void CountsPastTheHeadersLimitByWalking()
    {
        byte* lp = NativeListpack.Create(0);
        try
        {
            for (int i = 0; i < 70_000; i++)
                lp = NativeListpack.InsertInteger(lp, NativeListpack.Bytes(lp) - 1, i);
            Assert.Equal(70_000, NativeListpack.Count(lp));
            Assert.Equal(-1, new Listpack(NativeListpack.AsSpan(lp)).StatedCount);
            lp = NativeListpack.Delete(lp, NativeListpack.First, 10_000);
            Assert.Equal(60_000, NativeListpack.Count(lp));
            Assert.Equal(60_000, new Listpack(NativeListpack.AsSpan(lp)).StatedCount);
            Assert.Equal(10_000, NativeListpack.Read(lp, NativeListpack.First, out _).Integer);
            Assert.Equal(69_999, NativeListpack.Read(lp, NativeListpack.Last(lp), out _).Integer);
        }
        finally
        {
            NativeListpack.Free(lp);
        }
    }

    private static string RandomElement(Random random) => random.Next(5) switch
    {
        0 => random.NextInt64(long.MinValue, long.MaxValue).ToString(System.Globalization.CultureInfo.InvariantCulture),
        1 => random.Next(-5000, 5000).ToString(System.Globalization.CultureInfo.InvariantCulture),
        2 => new string((char)('a' + random.Next(26)), random.Next(0, 70)),
        3 => new string('x', random.Next(100, 5000)),
        _ => "v" + random.Next(100),
    };

    private static void AssertSame(List<string> model, byte* lp)
    {
        var reader = new Listpack(NativeListpack.AsSpan(lp));
        Assert.Equal(model.Count, reader.StatedCount);
        Assert.Equal(model.Count, NativeListpack.Count(lp));
        Span<byte> scratch = stackalloc byte[24];
        int i = 0;
        while (reader.Next(out var element))
        {
            Assert.True(i < model.Count);
            Assert.Equal(model[i], Encoding.ASCII.GetString(element.AsBytes(scratch)));
            i++;
        }
        Assert.Equal(model.Count, i);
        int last = NativeListpack.Last(lp);
        if (model.Count > 0)
            Assert.Equal(model[^1], Encoding.ASCII.GetString(NativeListpack.Read(lp, last, out _).AsBytes(scratch)));
    }
}
