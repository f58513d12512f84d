using System.Text;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// TTLs live in the database's volatile-key vector, not in the entries: each key's expiry stays
/// its own through removals from the middle of the vector (which move its last key), block
/// replacements, detaching and adding again, and the expiry sampler.
/// </summary>
[Collection(NativeMemoryCollection.Name)]
public sealed unsafe class DatabaseExpiryTests
{
    private const long Now = 1_000_000;

    [Fact]
    public void TheEntryHeaderIsTheTwentyEightBytesItsOffsetsAssume()
    {
        Assert.Equal(Entry.HeaderSize, sizeof(Entry));
        Assert.Equal(28, Entry.HeaderSize);
    }

    [Fact]
    public void EachKeyKeepsItsOwnExpiryWhileOthersComeAndGo()
    {
        using var db = new Database(0);
        const int keys = 200;
        var expected = new Dictionary<int, long>();
        for (int i = 0; i < keys; i++)
        {
            long expireAt = i % 3 == 0 ? 0 : Now + 1_000 + i;
            db.AddString(Key(i), Keyspace.Hash(Key(i)), "v"u8, expireAt);
            expected[i] = expireAt;
        }
        Assert.Equal(expected.Values.Count(t => t != 0), db.ExpiresCount);

        // Clear every fourth TTL (removals from the middle move the vector's last key), change
        // every fifth, delete every seventh key.
        for (int i = 0; i < keys; i++)
        {
            Entry* e = Find(db, i);
            if (i % 7 == 0)
            {
                Assert.True(db.Delete(Key(i), Keyspace.Hash(Key(i)), Now));
                expected.Remove(i);
            }
            else if (i % 4 == 0)
            {
                db.SetExpire(e, 0);
                expected[i] = 0;
            }
            else if (i % 5 == 0)
            {
                db.SetExpire(e, Now + 50_000 + i);
                expected[i] = Now + 50_000 + i;
            }
        }

        foreach (var (i, expireAt) in expected)
        {
            Entry* e = Find(db, i);
            Assert.Equal(expireAt, db.ExpireAtOf(e));
            Assert.Equal(expireAt != 0, e->HasExpiry);
        }
        Assert.Equal(expected.Values.Count(t => t != 0), db.ExpiresCount);
    }

    [Fact]
    public void AReplacedBlockAndADetachedKeyCarryTheirExpiry()
    {
        using var db = new Database(0);
        using var other = new Database(1);
        byte[] key = Key(1);
        uint hash = Keyspace.Hash(key);
        db.AddString(key, hash, "short"u8, Now + 5_000);
        db.AddString(Key(2), Keyspace.Hash(Key(2)), "x"u8, Now + 9_000);

        // A value that does not fit the block moves the key to a new one: the vector follows it.
        Entry* grown = db.SetString(key, hash, new byte[4096], -1, Now);
        Assert.Equal(Now + 5_000, db.ExpireAtOf(grown));

        Entry* detached = db.Detach(db.Keys.FindSlot(key, hash), out long expireAt);
        Assert.Equal(Now + 5_000, expireAt);
        Assert.Equal(1, db.ExpiresCount);
        Assert.False(detached->HasExpiry);
        other.Add(detached, hash, expireAt);
        Assert.Equal(Now + 5_000, other.ExpireAtOf(other.Lookup(key, hash, Now)));
        Assert.Equal(Now + 9_000, db.ExpireAtOf(Find(db, 2)));
    }

    [Fact]
    public void ExpiredKeysAreDeletedOnLookupAndBySampling()
    {
        using var db = new Database(0);
        for (int i = 0; i < 50; i++)
            db.AddString(Key(i), Keyspace.Hash(Key(i)), "v"u8, i < 25 ? Now - 1 : Now + 60_000);

        Assert.True(db.Lookup(Key(0), Keyspace.Hash(Key(0)), Now) == null);
        Assert.Equal(49, db.Count);
        // Sampling picks keys at random: keep going until the 24 left have been met.
        var random = new Random(7);
        for (int round = 0; round < 10_000 && db.Count > 25; round++)
            db.ExpireSample(20, Now, random);
        Assert.Equal(25, db.Count);
        Assert.Equal(25, db.ExpiresCount);
        for (int i = 25; i < 50; i++)
            Assert.Equal(Now + 60_000, db.ExpireAtOf(Find(db, i)));
    }

    private static byte[] Key(int i) => Encoding.ASCII.GetBytes($"key:{i:D7}");

    private static Entry* Find(Database db, int i)
    {
        Entry* e = db.Keys.Find(Key(i), Keyspace.Hash(Key(i)));
        Assert.True(e != null, $"key {i} missing");
        return e;
    }
}
