using System.Text;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.DataTypes.Packed;
using Diagnostics.Server.Memory;
using Diagnostics.Server.Persistence;
using Xunit;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The quicklist behind lists, checked against a plain list of strings after every step of
/// random pushes, pops, inserts, sets, removals and trims at both ends and in the middle, for
/// node limits counted in elements and in bytes, with elements past the byte limit: the
/// elements read forward, backward and by index, every node a valid listpack within Redis's
/// limits where Redis keeps them, and <see cref="ListValue.Bytes"/> equal to what the allocator
/// charged this thread for the list. Node boundaries themselves are checked against
/// redis-server in ListConformanceTests.
/// </summary>
public sealed unsafe class ListValueTests
{
    public static TheoryData<int> Fills => new() { -1, -2, -5, 0, 1, 2, 3, 5, 16, 128 };

    [Theory]
    [MemberData(nameof(Fills))]
    public void RandomEditsMatchAModel(int fill)
    {
        var random = new Random(20261127 + fill);
        var model = new List<string>();
        long before = TrackedAllocator.CurrentThread.LiveBytes;
        ListValue* list = ListValue.Create(fill);
        try
        {
            for (int step = 0; step < 3000; step++)
            {
                Apply(list, model, random);
                if (step % 7 == 0 || model.Count < 40)
                    AssertSame(list, model, random);
                Assert.Equal(TrackedAllocator.CurrentThread.LiveBytes - before, list->Bytes);
            }
        }
        finally
        {
            ListValue.Destroy(list);
        }
        Assert.Equal(before, TrackedAllocator.CurrentThread.LiveBytes);
    }

    [Theory]
    [InlineData(-2, 5000, 10)]
    [InlineData(-1, 20000, 3)]
    [InlineData(4, 100_000, 7)]
    [InlineData(-5, 50_000, 1)]
    public void PushesCutNodesAtTheLimit(int fill, int count, int length)
    {
        ListValue* list = ListValue.Create(fill);
        try
        {
            for (int i = 0; i < count; i++)
                list->PushTail(Encoding.ASCII.GetBytes(("e" + i).PadRight(length, 'x')));
            Assert.Equal(count, list->Count);
            int index = 0;
            for (int n = 0; n < list->NodeCount; n++)
            {
                ListNode* node = list->NodeAt(n);
                Assert.False(node->IsPlain);
                if (fill > 0)
                    Assert.True(node->Count <= fill);
                else
                    Assert.True(node->Size <= 4096 << (-fill - 1), $"node {n}: {node->Size} bytes");
                // Every node but the last was full: the element that started the next would not have fitted.
                index += node->Count;
                if (n < list->NodeCount - 1)
                    Assert.False(ListNodeLimits.AllowInsert(node, fill, ("e" + index).PadRight(length, 'x').Length));
            }
        }
        finally
        {
            ListValue.Destroy(list);
        }
    }

    [Fact]
    public void IntegersAreStoredAsIntegersAndReadBackAsText()
    {
        ListValue* list = ListValue.Create();
        try
        {
            string[] values = ["0", "-1", "127", "4095", "-4096", "32767", "8388607", "2147483647", "-9223372036854775808", "9223372036854775807", "007", "+1", "-0", "1.5", "99999999999999999999"];
            foreach (string v in values)
                list->PushTail(Encoding.ASCII.GetBytes(v));
            Span<byte> scratch = stackalloc byte[24];
            for (int i = 0; i < values.Length; i++)
            {
                var element = list->Get(i);
                Assert.Equal(values[i], Encoding.ASCII.GetString(element.AsBytes(scratch)));
                Assert.Equal(i < 10, element.IsInteger);
            }
            // Compared the way Redis compares: only canonical integer text matches an integer element.
            Assert.Equal(0, list->RemoveMatching("00"u8, 0));
            Assert.Equal(1, list->RemoveMatching("-1"u8, 0));
            Assert.Equal(1, list->RemoveMatching("007"u8, 0));
        }
        finally
        {
            ListValue.Destroy(list);
        }
    }

    [Fact]
    public void LoadedNodesAreKeptAsTheyCame()
    {
        ListValue* list = ListValue.Create(2);
        try
        {
            byte* lp = NativeListpack.Create(64);
            foreach (string v in new[] { "a", "b", "c", "12" })
                lp = NativeListpack.InsertString(lp, NativeListpack.Bytes(lp) - 1, Encoding.ASCII.GetBytes(v));
            list->AppendListpack(NativeListpack.AsSpan(lp));   // over the fill: kept whole, as Redis keeps it
            list->AppendListpack(new byte[] { 7, 0, 0, 0, 0, 0, 0xFF }); // empty: skipped
            list->AppendPlain("plain"u8);
            NativeListpack.Free(lp);
            Assert.Equal(2, list->NodeCount);
            Assert.Equal(5, list->Count);
            Assert.Equal(4, list->NodeAt(0)->Count);
            Assert.True(list->NodeAt(1)->IsPlain);
            Span<byte> scratch = stackalloc byte[24];
            Assert.Equal("plain", Encoding.ASCII.GetString(list->Tail.AsBytes(scratch)));
            Assert.Equal("12", Encoding.ASCII.GetString(list->Get(3).AsBytes(scratch)));
            ListValue* copy = list->Copy();
            // Node for node the same bytes; what the allocator charges for them depends on the heap's
            // state (glibc may hand out a slightly larger free chunk), so Bytes is not compared.
            Assert.Equal(list->NodeCount, copy->NodeCount);
            Assert.Equal(list->NodeBytes, copy->NodeBytes);
            Assert.Equal(list->Count, copy->Count);
            Assert.Equal("12", Encoding.ASCII.GetString(copy->Get(3).AsBytes(scratch)));
            Assert.True(copy->NodeAt(1)->IsPlain);
            ListValue.Destroy(copy);
        }
        finally
        {
            ListValue.Destroy(list);
        }
    }

    private static void Apply(ListValue* list, List<string> model, Random random)
    {
        int op = random.Next(100);
        if (model.Count == 0 || op < 30)
        {
            string text = RandomElement(random);
            if (random.Next(2) == 0)
            {
                list->PushHead(Encoding.ASCII.GetBytes(text));
                model.Insert(0, text);
            }
            else
            {
                list->PushTail(Encoding.ASCII.GetBytes(text));
                model.Add(text);
            }
        }
        else if (op < 45)
        {
            if (random.Next(2) == 0)
            {
                list->RemoveHead();
                model.RemoveAt(0);
            }
            else
            {
                list->RemoveTail();
                model.RemoveAt(model.Count - 1);
            }
        }
        else if (op < 60)
        {
            string pivot = random.Next(10) == 0 ? "absent" : model[random.Next(model.Count)];
            string text = RandomElement(random);
            bool after = random.Next(2) == 0;
            bool inserted = list->InsertBeside(Encoding.ASCII.GetBytes(pivot), Encoding.ASCII.GetBytes(text), after);
            int at = model.IndexOf(pivot);
            Assert.Equal(at >= 0, inserted);
            if (at >= 0)
                model.Insert(after ? at + 1 : at, text);
        }
        else if (op < 72)
        {
            int index = random.Next(model.Count);
            string text = RandomElement(random);
            list->Set(index, Encoding.ASCII.GetBytes(text));
            model[index] = text;
        }
        else if (op < 82)
        {
            string value = model[random.Next(model.Count)];
            int limit = random.Next(-3, 4);
            int removed = list->RemoveMatching(Encoding.ASCII.GetBytes(value), limit);
            Assert.Equal(RemoveFromModel(model, value, limit), removed);
        }
        else if (op < 86)
        {
            int start = random.Next(model.Count), stop = random.Next(-1, model.Count);
            if (random.Next(20) == 0)
                stop = start - 1;
            list->Trim(start, stop);
            if (start > stop)
                model.Clear();
            else
            {
                model.RemoveRange(stop + 1, model.Count - stop - 1);
                model.RemoveRange(0, start);
            }
        }
        else
        {
            int start = random.Next(model.Count);
            int length = random.Next(1, 30);
            list->DeleteRange(start, length);
            model.RemoveRange(start, Math.Min(length, model.Count - start));
        }
    }

    private static int RemoveFromModel(List<string> model, string value, int limit)
    {
        int wanted = limit == 0 ? int.MaxValue : Math.Abs(limit), removed = 0;
        if (limit >= 0)
        {
            for (int i = 0; i < model.Count && removed < wanted;)
            {
                if (model[i] == value) { model.RemoveAt(i); removed++; }
                else i++;
            }
        }
        else
        {
            for (int i = model.Count - 1; i >= 0 && removed < wanted; i--)
                if (model[i] == value) { model.RemoveAt(i); removed++; }
        }
        return removed;
    }

    private static void AssertSame(ListValue* list, List<string> model, Random random)
    {
        Assert.Equal(model.Count, list->Count);
        Span<byte> scratch = stackalloc byte[24];
        long counted = 0;
        for (int n = 0; n < list->NodeCount; n++)
        {
            ListNode* node = list->NodeAt(n);
            Assert.True(node->Count > 0, $"node {n} is empty");
            counted += node->Count;
            Assert.False(node->IsPlain); // no element here reaches 1 GB
            var check = new Listpack(new ReadOnlySpan<byte>(node->Block, (int)node->Size));
            int elements = 0;
            while (check.Next(out _))
                elements++;
            Assert.Equal(node->Count, elements);
            Assert.Equal(node->Count, NativeListpack.Count(node->Block));
        }
        Assert.Equal(model.Count, counted);
        if (model.Count == 0)
            return;
        var forward = list->From(0, forward: true);
        for (int i = 0; i < model.Count; i++)
        {
            Assert.True(forward.Next(out var element));
            Assert.Equal(model[i], Encoding.ASCII.GetString(element.AsBytes(scratch)));
        }
        Assert.False(forward.Next(out _));
        int from = random.Next(model.Count);
        var backward = list->From(from, forward: false);
        for (int i = from; i >= 0; i--)
        {
            Assert.True(backward.Next(out var element));
            Assert.Equal(model[i], Encoding.ASCII.GetString(element.AsBytes(scratch)));
        }
        Assert.False(backward.Next(out _));
        for (int k = 0; k < 5; k++)
        {
            int index = random.Next(model.Count);
            Assert.Equal(model[index], Encoding.ASCII.GetString(list->Get(index).AsBytes(scratch)));
        }
        Assert.Equal(model[0], Encoding.ASCII.GetString(list->Head.AsBytes(scratch)));
        Assert.Equal(model[^1], Encoding.ASCII.GetString(list->Tail.AsBytes(scratch)));
    }

    private static string RandomElement(Random random) => random.Next(10) switch
    {
        0 or 1 or 2 => random.Next(-5000, 100_000).ToString(System.Globalization.CultureInfo.InvariantCulture),
        3 => new string('b', random.Next(3000, 20_000)),                      // past a 4 or 8 KB node
        _ => "e" + random.Next(40) + new string('y', random.Next(0, random.Next(2) == 0 ? 8 : 300)),
    };
}
