using System.Text;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Persistence;
using Xunit;
using ValueType = Diagnostics.Server.Engine.ValueType;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The <see cref="Hashes"/> facade against a dictionary model: random sets, updates and deletes
/// keep the listpack valid and in insertion order, conversion happens exactly at the limits, and
/// reads answer alike in both forms.
/// </summary>
public sealed unsafe class HashesTests
{
    private static byte[] B(string text) => Encoding.ASCII.GetBytes(text);

    private static List<(string Field, string Value)> Read(Entry* e)
    {
        var pairs = Hashes.Pairs(e);
        var list = new List<(string, string)>();
        while (pairs.MoveNext())
            list.Add((Encoding.ASCII.GetString(pairs.Field), Encoding.ASCII.GetString(pairs.Value)));
        return list;
    }

    [Fact]
    public void RandomEditsKeepInsertionOrderUntilTheEntryLimit()
    {
        var random = new Random(2026);
        var limits = new HashLimits(MaxEntries: 40, MaxValue: 64);
        Entry* e = Values.NewEntry("h"u8, ValueType.Hash);
        var order = new List<string>();
        var model = new Dictionary<string, string>();
        try
        {
            Assert.True(Hashes.IsListpack(e));
            for (int step = 0; step < 3000 && Hashes.IsListpack(e); step++)
            {
                string field = random.Next(3) == 0 ? random.Next(-5000, 5000).ToString() : "f" + random.Next(45);
                if (random.Next(4) == 0)
                {
                    Assert.Equal(model.Remove(field), Hashes.Delete(e, B(field)));
                    order.Remove(field);
                }
                else
                {
                    string value = random.Next(2) == 0 ? random.NextInt64().ToString() : new string('v', random.Next(0, 65));
                    bool added = !model.ContainsKey(field);
                    if (added)
                        order.Add(field);
                    model[field] = value;
                    Assert.Equal(added, Hashes.Set(e, B(field), B(value), limits));
                }
                if (!Hashes.IsListpack(e))
                {
                    Assert.Equal(limits.MaxEntries + 1, model.Count);
                    break;
                }
                Assert.Equal(order.Select(f => (f, model[f])), Read(e));
                var check = new Listpack(NativeListpackSpan(e)); // validates every element's encoding
                int elements = 0;
                while (check.Next(out _))
                    elements++;
                Assert.Equal(model.Count * 2, elements);
            }
            Assert.False(Hashes.IsListpack(e));
            Assert.Equal(model.OrderBy(p => p.Key, StringComparer.Ordinal).Select(p => (p.Key, p.Value)), Read(e).OrderBy(p => p.Field, StringComparer.Ordinal));
            Span<byte> scratch = stackalloc byte[20];
            foreach (var (field, value) in model)
            {
                Assert.True(Hashes.TryGet(e, B(field), scratch, out var got));
                Assert.Equal(value, Encoding.ASCII.GetString(got));
                Assert.Equal(value.Length, Hashes.ValueLength(e, B(field)));
            }
        }
        finally
        {
            EntryStore.Free(e);
        }
    }

    [Fact]
    public void ALongFieldOrValueConvertsBeforeTheWriteAndIntegersReadAsText()
    {
        var limits = new HashLimits(128, 4);
        Entry* e = Values.NewEntry("h"u8, ValueType.Hash);
        try
        {
            Assert.True(Hashes.Set(e, B("-17"), B("9000000000"), limits)); // 10 digits, but stored as an integer: still text of 10 > 4
            Assert.False(Hashes.IsListpack(e));
        }
        finally
        {
            EntryStore.Free(e);
        }

        e = Values.NewEntry("h"u8, ValueType.Hash);
        try
        {
            Assert.True(Hashes.Set(e, B("-17"), B("4095"), limits));
            Assert.True(Hashes.Set(e, B("abcd"), B(""), limits));
            Assert.True(Hashes.IsListpack(e));
            Span<byte> scratch = stackalloc byte[20];
            Assert.True(Hashes.TryGet(e, B("-17"), scratch, out var value));
            Assert.Equal("4095", Encoding.ASCII.GetString(value));
            Assert.Equal(4, Hashes.ValueLength(e, B("-17")));
            Assert.Equal(-1, Hashes.ValueLength(e, B("17")));
            Assert.False(Hashes.Exists(e, B("-017")));
            Assert.Equal([("-17", "4095"), ("abcd", "")], Read(e));
            Hashes.PrepareWrite(e, longest: 5, total: 5, limits);
            Assert.False(Hashes.IsListpack(e));
            Assert.Equal(2, Hashes.Count(e));
            Assert.True(Hashes.Delete(e, B("abcd")));
            Assert.False(Hashes.IsListpack(e)); // never back
        }
        finally
        {
            EntryStore.Free(e);
        }
    }

    private static ReadOnlySpan<byte> NativeListpackSpan(Entry* e) => global::Diagnostics.Server.DataTypes.Packed.NativeListpack.AsSpan(Values.Packed(e));
}
