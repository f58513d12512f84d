using System.Globalization;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// Thousands of random operations on one list, sorted set, hash and set, mirrored in a plain C#
/// model, with the server's whole value compared to the model as it goes. Element sizes straddle
/// the list's 7-byte inline limit and the values grow and shrink, so resizes, ring wrap-around,
/// rehashing and skip-list levels are all exercised. Seeds are fixed: a failure repeats.
/// </summary>
public sealed class DataTypeModelTests(SharedServer shared) : IClassFixture<SharedServer>
{
    private const int Operations = 3000;

    private static string Element(Random random) => random.Next(4) switch
    {
        0 => random.Next(20).ToString(CultureInfo.InvariantCulture),
        1 => new string((char)('a' + random.Next(6)), random.Next(0, 8)),
        2 => "element-" + random.Next(30),
        _ => new string('x', random.Next(8, 40)) + random.Next(5),
    };

    [Fact]
    public void ListMatchesAModelThroughRandomOperations()
    {
        using var c = shared.Connect();
        var random = new Random(7);
        var model = new List<string>();
        const string key = "model:list";
        for (int op = 0; op < Operations; op++)
        {
            string e = Element(random);
            switch (random.Next(9))
            {
                case 0:
                    RespAssert.Integer(model.Count + 1, c.Call("LPUSH", key, e));
                    model.Insert(0, e);
                    break;
                case 1:
                case 2:
                    RespAssert.Integer(model.Count + 1, c.Call("RPUSH", key, e));
                    model.Add(e);
                    break;
                case 3:
                    if (model.Count == 0)
                        RespAssert.Null(c.Call("LPOP", key));
                    else
                    {
                        RespAssert.Bulk(model[0], c.Call("LPOP", key));
                        model.RemoveAt(0);
                    }
                    break;
                case 4:
                {
                    int n = random.Next(4);
                    var reply = c.Call("RPOP", key, n.ToString(CultureInfo.InvariantCulture));
                    if (model.Count == 0)
                    {
                        RespAssert.Null(reply);
                        break;
                    }
                    int taken = Math.Min(n, model.Count);
                    Assert.Equal(model.AsEnumerable().Reverse().Take(taken), reply.Array.Select(r => r.Text));
                    model.RemoveRange(model.Count - taken, taken);
                    break;
                }
                case 5 when model.Count > 0:
                {
                    int index = random.Next(-model.Count, model.Count);
                    RespAssert.Ok(c.Call("LSET", key, index.ToString(CultureInfo.InvariantCulture), e));
                    model[index < 0 ? model.Count + index : index] = e;
                    break;
                }
                case 6 when model.Count > 0:
                {
                    string pivot = model[random.Next(model.Count)];
                    bool after = random.Next(2) == 0;
                    int at = model.IndexOf(pivot);
                    RespAssert.Integer(model.Count + 1, c.Call("LINSERT", key, after ? "AFTER" : "BEFORE", pivot, e));
                    model.Insert(after ? at + 1 : at, e);
                    break;
                }
                case 7 when model.Count > 0:
                {
                    string target = model[random.Next(model.Count)];
                    int count = random.Next(-2, 3);
                    int removed = RemoveMatching(model, target, count);
                    RespAssert.Integer(removed, c.Call("LREM", key, count.ToString(CultureInfo.InvariantCulture), target));
                    break;
                }
                case 8 when model.Count > 20:
                {
                    int start = random.Next(3), stop = -1 - random.Next(3);
                    RespAssert.Ok(c.Call("LTRIM", key, start.ToString(CultureInfo.InvariantCulture), stop.ToString(CultureInfo.InvariantCulture)));
                    model = model.GetRange(start, model.Count + stop + 1 - start);
                    break;
                }
            }
            if (op % 50 == 0 || op == Operations - 1)
            {
                Assert.Equal(model, c.Call("LRANGE", key, "0", "-1").Array.Select(r => r.Text));
                RespAssert.Integer(model.Count, c.Call("LLEN", key));
                if (model.Count > 0)
                {
                    int probe = random.Next(model.Count);
                    RespAssert.Bulk(model[probe], c.Call("LINDEX", key, probe.ToString(CultureInfo.InvariantCulture)));
                }
            }
        }
    }

    private static int RemoveMatching(List<string> model, string target, int count)
    {
        int limit = count == 0 ? int.MaxValue : Math.Abs(count), removed = 0;
        if (count >= 0)
        {
            for (int i = 0; i < model.Count && removed < limit;)
            {
                if (model[i] == target) { model.RemoveAt(i); removed++; }
                else i++;
            }
        }
        else
        {
            for (int i = model.Count - 1; i >= 0 && removed < limit; i--)
                if (model[i] == target) { model.RemoveAt(i); removed++; }
        }
        return removed;
    }

    [Fact]
    public void SortedSetMatchesAModelThroughRandomOperations()
    {
        using var c = shared.Connect();
        var random = new Random(11);
        var model = new Dictionary<string, double>();
        const string key = "model:zset";
        for (int op = 0; op < Operations; op++)
        {
            string member = "m" + random.Next(400);
            // Few distinct scores, so ties ordered by member are common.
            double score = random.Next(3) == 0 ? random.Next(-5, 5) : Math.Round(random.NextDouble() * 100 - 50, 2);
            string text = score.ToString("R", CultureInfo.InvariantCulture);
            switch (random.Next(6))
            {
                case 0:
                case 1:
                    RespAssert.Integer(model.ContainsKey(member) ? 0 : 1, c.Call("ZADD", key, text, member));
                    model[member] = score;
                    break;
                case 2:
                {
                    double next = model.GetValueOrDefault(member) + score;
                    Assert.Equal(next, double.Parse(c.Call("ZINCRBY", key, text, member).Text!, CultureInfo.InvariantCulture));
                    model[member] = next;
                    break;
                }
                case 3:
                    RespAssert.Integer(model.Remove(member) ? 1 : 0, c.Call("ZREM", key, member));
                    break;
                case 4 when model.Count > 10:
                {
                    var ordered = Ordered(model);
                    int start = random.Next(ordered.Count), stop = start + random.Next(3);
                    int removed = Math.Min(stop, ordered.Count - 1) - start + 1;
                    RespAssert.Integer(removed, c.Call("ZREMRANGEBYRANK", key, start.ToString(CultureInfo.InvariantCulture), stop.ToString(CultureInfo.InvariantCulture)));
                    foreach (var (m, _) in ordered.Skip(start).Take(removed))
                        model.Remove(m);
                    break;
                }
                case 5 when model.Count > 0:
                {
                    var ordered = Ordered(model);
                    int rank = random.Next(ordered.Count);
                    RespAssert.Integer(rank, c.Call("ZRANK", key, ordered[rank].Member));
                    RespAssert.Integer(ordered.Count - 1 - rank, c.Call("ZREVRANK", key, ordered[rank].Member));
                    double low = ordered[rank].Score;
                    long inRange = ordered.Count(p => p.Score >= low && p.Score <= low + 10);
                    RespAssert.Integer(inRange, c.Call("ZCOUNT", key, low.ToString("R", CultureInfo.InvariantCulture), (low + 10).ToString("R", CultureInfo.InvariantCulture)));
                    break;
                }
            }
            if (op % 50 == 0 || op == Operations - 1)
            {
                var expected = Ordered(model).SelectMany(p => new[] { p.Member, p.Score.ToString("R", CultureInfo.InvariantCulture) });
                var reply = c.Call("ZRANGE", key, "0", "-1", "WITHSCORES").Array.Select(r => r.Text!).ToList();
                Assert.Equal(expected, reply.Select((t, i) => i % 2 == 0 ? t : double.Parse(t, CultureInfo.InvariantCulture).ToString("R", CultureInfo.InvariantCulture)));
                RespAssert.Integer(model.Count, c.Call("ZCARD", key));
            }
        }
    }

    private static List<(string Member, double Score)> Ordered(Dictionary<string, double> model)
        => model.Select(p => (p.Key, p.Value)).OrderBy(p => p.Value).ThenBy(p => p.Key, StringComparer.Ordinal).ToList();

    [Fact]
    public void HashAndSetMatchAModelThroughRandomOperations()
    {
        using var c = shared.Connect();
        var random = new Random(13);
        var hash = new Dictionary<string, string>();
        var set = new HashSet<string>();
        for (int op = 0; op < Operations; op++)
        {
            // Bursts of growth then of deletion, so tables grow and shrink several times.
            bool growing = op / 500 % 2 == 0;
            string field = "f" + random.Next(2000);
            string value = Element(random);
            if (growing || random.Next(4) == 0)
            {
                RespAssert.Integer(hash.ContainsKey(field) ? 0 : 1, c.Call("HSET", "model:hash", field, value));
                hash[field] = value;
                RespAssert.Integer(set.Add(field) ? 1 : 0, c.Call("SADD", "model:set", field));
            }
            else
            {
                RespAssert.Integer(hash.Remove(field) ? 1 : 0, c.Call("HDEL", "model:hash", field));
                RespAssert.Integer(set.Remove(field) ? 1 : 0, c.Call("SREM", "model:set", field));
            }
            if (op % 100 == 0 || op == Operations - 1)
            {
                var all = c.Call("HGETALL", "model:hash").Array;
                var seen = new Dictionary<string, string>();
                for (int i = 0; i < all.Count; i += 2)
                    seen.Add(all[i].Text!, all[i + 1].Text!);
                Assert.Equal(hash.OrderBy(p => p.Key, StringComparer.Ordinal), seen.OrderBy(p => p.Key, StringComparer.Ordinal));
                Assert.Equal(set.Order(StringComparer.Ordinal), c.Call("SMEMBERS", "model:set").Array.Select(r => r.Text!).Order(StringComparer.Ordinal));
                RespAssert.Integer(hash.Count, c.Call("HLEN", "model:hash"));
            }
        }
    }
}
