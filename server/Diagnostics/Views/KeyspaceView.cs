using System.Diagnostics;
using System.Text;
using Diagnostics.Contracts;
using Diagnostics.Server.DataTypes;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>
/// The keyspace by value type and its biggest keys, for GET /api/keyspace and keyspace.json in
/// the debug package. The walk holds every shard, so it is bounded: it stops after
/// <see cref="KeyBudget"/> keys and says so, as a sample of the rest.
/// </summary>
public static unsafe class KeyspaceView
{
    public const int KeyBudget = 200_000;
    /// <summary>
    /// How long the walk waits for the shards: a command that holds them all (KEYS on a big
    /// keyspace, DEBUG SLEEP, a long script) must not hold the operator's question too.
    /// </summary>
    public const int ShardWaitMillis = 250;
    private const int BiggestKept = 20;
    private const int GroupsKept = 20;
    private const int NameShown = 64;

    public static KeyspaceReport Build(DataServer server)
    {
        var keyspace = server.Keyspace;
        int typeCount = Enum.GetValues<Engine.ValueType>().Length;
        var walker = new Walker(new long[typeCount], new long[typeCount], new long[typeCount], new List<(long, int, nint)>(BiggestKept + 1),
            new List<StreamGroupSummary>(GroupsKept + 1), DateTimeOffset.UtcNow.ToUnixTimeMilliseconds());
        var biggest = new List<BigKey>();
        long total = 0;
        var watch = Stopwatch.StartNew();
        bool walked = keyspace.TryRunExclusive(ShardWaitMillis, () =>
        {
            for (int db = 0; db < keyspace.DatabaseCount; db++)
            {
                foreach (var shard in keyspace.Shards)
                {
                    var database = shard.Databases[db];
                    total += database.Count;
                    if (walker.Walked >= KeyBudget)
                        continue;
                    walker.Database = db;
                    database.Keys.ForEach(ref walker);
                }
            }
            // Names are read while the entries are still held.
            foreach (var (bytes, db, pointer) in walker.Top)
            {
                var e = (Entry*)pointer;
                biggest.Add(new BigKey(db, Printable(Entry.KeyOf(e)), Encoding.ASCII.GetString(ValueTypeNames.Of(e->Type)), Values.Length(e), bytes));
            }
        });
        if (!walked)
            return Unavailable(server);
        var types = new List<KeyTypeSummary>();
        foreach (Engine.ValueType type in Enum.GetValues<Engine.ValueType>())
        {
            int t = (int)type;
            types.Add(new KeyTypeSummary(Encoding.ASCII.GetString(ValueTypeNames.Of(type)), walker.Keys[t], walker.Elements[t], walker.Bytes[t]));
        }
        var report = new KeyspaceReport
        {
            KeysTotal = total,
            KeysWalked = walker.Walked,
            Complete = walker.Walked >= total,
            WalkMilliseconds = watch.Elapsed.TotalMilliseconds,
            Types = types,
            Biggest = biggest,
            StreamGroups = walker.Groups,
            TakenUnixMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(),
        };
        server.LastKeyspaceReport = report;
        return report;
    }

    /// <summary>The last walk's figures, saying why there is no newer one and who holds the shards.</summary>
    private static KeyspaceReport Unavailable(DataServer server)
    {
        var holders = new StringBuilder();
        foreach (var work in InFlightView.Build())
        {
            if (work.Activity == InFlightWork.WaitingForShards || work.ElapsedMicros < ShardWaitMillis * 1000.0)
                continue;
            holders.Append(holders.Length == 0 ? " (running: " : ", ")
                .Append(work.Activity).Append(" for client ").Append(work.ClientId)
                .Append(", ").Append((work.ElapsedMicros / 1000).ToString("N0", System.Globalization.CultureInfo.InvariantCulture)).Append(" ms");
        }
        if (holders.Length > 0)
            holders.Append(')');
        string reason = $"the shards were held by a long command for more than {ShardWaitMillis} ms{holders}";
        var last = server.LastKeyspaceReport;
        return last is null
            ? new KeyspaceReport { Unavailable = reason + "; no earlier walk to show" }
            : last with { Unavailable = reason + "; these figures are from the last walk" };
    }

    /// <summary>Printable form of a key name: non-printable bytes as \xNN, cut to 64 characters.</summary>
    internal static string Printable(ReadOnlySpan<byte> key)
    {
        var text = new StringBuilder();
        foreach (byte b in key)
        {
            if (text.Length >= NameShown)
            {
                text.Append('…');
                break;
            }
            if (b is >= 0x20 and < 0x7f && b != (byte)'\\')
                text.Append((char)b);
            else
                text.Append("\\x").Append(b.ToString("x2", System.Globalization.CultureInfo.InvariantCulture));
        }
        return text.ToString();
    }

    private struct Walker(long[] keys, long[] elements, long[] bytes, List<(long, int, nint)> top, List<StreamGroupSummary> groups, long nowMs) : IEntryVisitor
    {
        public readonly long[] Keys = keys;
        public readonly long[] Elements = elements;
        public readonly long[] Bytes = bytes;
        public readonly List<(long Bytes, int Database, nint Entry)> Top = top;
        /// <summary>The stream groups with the most pending entries, most first.</summary>
        public readonly List<StreamGroupSummary> Groups = groups;
        public long Walked;
        public int Database;

        public void Visit(Entry* entry)
        {
            if (Walked >= KeyBudget)
                return;
            Walked++;
            int type = (int)entry->Type;
            long size = EntryStore.ChargedBytes(entry);
            Keys[type]++;
            Elements[type] += Values.Length(entry);
            Bytes[type] += size;
            if (entry->Type == Engine.ValueType.Stream && Values.Stream(entry)->Groups != null)
                AddGroups(entry);
            // Top stays sorted, biggest first: a key joins when there is room or it beats the smallest.
            if (Top.Count < BiggestKept || size > Top[^1].Bytes)
            {
                Top.Add((size, Database, (nint)entry));
                Top.Sort(static (a, b) => b.Bytes.CompareTo(a.Bytes));
                if (Top.Count > BiggestKept)
                    Top.RemoveAt(Top.Count - 1);
            }
        }

        /// <summary>Each group of the stream: kept when it has pending entries and is among the most pending.</summary>
        private readonly void AddGroups(Entry* entry)
        {
            var stream = Values.Stream(entry);
            foreach (var (name, pointer) in stream->Groups->Sorted())
            {
                var group = (DataTypes.Streams.ConsumerGroup*)pointer;
                long pending = group->Pending->Count;
                if (pending == 0 || (Groups.Count >= GroupsKept && pending <= Groups[^1].Pending))
                    continue;
                var oldest = group->Pending->At(group->Pending->From(DataTypes.Streams.StreamId.Min));
                Groups.Add(new StreamGroupSummary(Database, Printable(Entry.KeyOf(entry)), Printable(name), group->ConsumerCount, pending,
                    Math.Max(0, nowMs - (long)Math.Min(oldest->Id.Ms, (ulong)long.MaxValue)), Math.Max(0, nowMs - oldest->DeliveryTime),
                    DataTypes.Streams.StreamLag.TryLag(stream, group, out long lag) ? lag : null, group->LastDelivered.ToString()));
                Groups.Sort(static (a, b) => b.Pending.CompareTo(a.Pending));
                if (Groups.Count > GroupsKept)
                    Groups.RemoveAt(Groups.Count - 1);
            }
        }
    }
}
