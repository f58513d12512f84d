using System.Text;
using Diagnostics.Server.Commands;
using Diagnostics.Server.Diagnostics.HotKeys;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Tests;

/// <summary>
/// One shard's hot-key sketch: a key hotter than the rest stays on top however many other keys
/// pass through (space-saving), counts halve once a second, and long keys are kept cut but told
/// apart.
/// </summary>
public sealed class HotKeySketchTests
{
    private static readonly CommandTable Commands = new();

    private static void Sample(HotKeySketch sketch, string key, string command = "incr", long client = 1, int database = 0)
    {
        byte[] bytes = Encoding.ASCII.GetBytes(key);
        sketch.Sample(database, bytes, Keyspace.Hash(bytes), Commands.Find(command)!, client);
    }

    private static List<HotKeyEntry> Read(HotKeySketch sketch, out long total)
    {
        var entries = new List<HotKeyEntry>();
        Assert.True(sketch.TryRead(entries, out total));
        entries.Sort((a, b) => b.Count.CompareTo(a.Count));
        return entries;
    }

    [Fact]
    public void AHotKeyStaysOnTopAmongManyColdOnes()
    {
        var sketch = new HotKeySketch(3);
        for (int i = 0; i < 10_000; i++)
        {
            Sample(sketch, "cold:" + i, "get", client: 100 + i % 7);
            if (i % 3 == 0)
                Sample(sketch, "hot", "incr", client: 1 + i % 5);
        }
        var entries = Read(sketch, out long total);
        Assert.Equal(10_000 + 3334, total);
        var top = entries[0];
        Assert.Equal("hot", Encoding.ASCII.GetString(top.Key));
        Assert.Equal(3, top.Shard);
        Assert.Equal("incr", top.Command);
        // Space-saving never under-counts a key it holds.
        Assert.True(top.Count >= 3334, $"count {top.Count}");
        Assert.Equal(4, top.Clients.Length);
        Assert.True(entries.Count <= HotKeySketch.Slots);
    }

    [Fact]
    public void CountsHalveOnceASecond()
    {
        var sketch = new HotKeySketch(0);
        for (int i = 0; i < 100; i++)
            Sample(sketch, "k");
        sketch.DecayIfDue(nowMs: 10_000);
        sketch.DecayIfDue(nowMs: 10_500); // not due yet
        Assert.Equal(50, Read(sketch, out long total)[0].Count);
        Assert.Equal(50, total);
        sketch.DecayIfDue(nowMs: 11_000);
        Assert.Equal(25, Read(sketch, out _)[0].Count);
    }

    [Fact]
    public void LongKeysAreKeptCutAndToldApartFromTheirDatabase()
    {
        var sketch = new HotKeySketch(0);
        string longKey = new('x', 200);
        Sample(sketch, longKey);
        Sample(sketch, longKey);
        Sample(sketch, longKey, database: 1);
        var entries = Read(sketch, out _);
        Assert.Equal(2, entries.Count);
        Assert.Equal(HotKeySketch.KeyBytesKept, entries[0].Key.Length);
        Assert.Equal(200, entries[0].KeyLength);
        Assert.Equal(2, entries[0].Count);
        Assert.Equal(0, entries[0].Database);
        Assert.Equal(1, entries[1].Database);
    }
}
