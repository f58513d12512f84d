using Diagnostics.Contracts;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>The hot-key sketches of every shard as one ranking (GET /api/hotkeys, hotkeys.json).</summary>
public static class HotKeysView
{
    private const int Shown = 10;

    public static HotKeysReport Build(DataServer server)
    {
        var hotKeys = server.HotKeys;
        var (entries, samples) = hotKeys.Read();
        var keys = new List<HotKey>(Math.Min(Shown, entries.Count));
        foreach (var entry in entries)
        {
            if (keys.Count == Shown)
                break;
            string name = KeyspaceView.Printable(entry.Key);
            if (entry.KeyLength > entry.Key.Length && !name.EndsWith('…'))
                name += "…";
            // Counts halve every second, so a steady rate r leaves about 2r samples.
            double perSecond = entry.Count * (double)Math.Max(1, hotKeys.Period) / 2;
            keys.Add(new HotKey(entry.Database, name, entry.Shard, samples > 0 ? (double)entry.Count / samples : 0, perSecond, entry.Command, entry.Clients));
        }
        return new HotKeysReport { SamplePeriod = hotKeys.Period, Samples = samples, Keys = keys };
    }
}
