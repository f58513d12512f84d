// The vectors below come from Debian's redis-server 7.0.15 (5:7.0.15-1~deb12u10, which carries the
// CVE-2025-32023 fix to the sparse checks), started with
//     redis-server --port 7390 --save "" --appendonly no --daemonize yes
// and driven by this python3 script (elements are "e0", "e1", ...; a value's bytes are read with GET):
//
//   import hashlib, socket
//   s = socket.create_connection(('127.0.0.1', 7390)); f = s.makefile('rb')
//   def r(*a):
//       s.sendall(b'*%d\r\n' % len(a) + b''.join(b'$%d\r\n%s\r\n' % (len(x), x) for x in (v if isinstance(v, bytes) else str(v).encode() for v in a)))
//       return read()
//   def read():
//       l = f.readline(); t, v = l[:1], l[1:-2]
//       if t == b'$': n = int(v); return None if n < 0 else f.read(n + 2)[:-2]
//       if t == b'*': return [read() for _ in range(int(v))]
//       return int(v) if t == b':' else (l[:-2].decode() if t == b'-' else v.decode())
//   sha = lambda b: hashlib.sha256(b).hexdigest()
//   def add(key, prefix, n, start=0):
//       for b in range(start, start + n, 1000): r('PFADD', key, *[f'{prefix}{i}' for i in range(b, min(b + 1000, start + n))])
//   def show(key):
//       v = r('GET', key); print(f'  {key}: len={len(v)} head={v[:16].hex()} sha={sha(v)}' + (f' hex={v.hex()}' if len(v) <= 300 else ''))
//   def scenario(key, prefix, n):
//       print(key, 'PFADD', r('PFADD', key) if n == 0 else add(key, prefix, n)); show(key); print('  PFCOUNT', r('PFCOUNT', key)); show(key)
//   r('FLUSHALL'); r('CONFIG', 'SET', 'hll-sparse-max-bytes', '3000')
//   for key, n in [('empty', 0), ('few', 5), ('hundred', 100), ('thousand', 1000), ('fivek', 5000)]: scenario(key, 'e', n)
//   print('decode few', r('PFDEBUG', 'DECODE', 'few'))
//   print('decode hundred', len(r('PFDEBUG', 'DECODE', 'hundred')), sha(r('PFDEBUG', 'DECODE', 'hundred')))
//   print('getreg hundred', sha(bytes(r('PFDEBUG', 'GETREG', 'hundred')))); show('hundred')
//   print('returns', ''.join(str(r('PFADD', 'inc', f'e{i}')) for i in range(300)) + '|' + ''.join(str(r('PFADD', 'inc', f'e{i}')) for i in range(300))); show('inc')
//   r('CONFIG', 'SET', 'hll-sparse-max-bytes', '200')
//   add('sm40', 'e', 40); show('sm40'); add('sm200', 'e', 200); show('sm200')
//   r('CONFIG', 'SET', 'hll-sparse-max-bytes', '3000')
//   add('a', 'e', 100); add('b', 'e', 200, 50); add('d2', 'x', 30); add('big1', 'e', 1000); add('big2', 'f', 1000)
//   for dest, *src in [('mss', 'a', 'b'), ('msd', 'a', 'fivek'), ('d2', 'a', 'b'), ('mbig', 'big1', 'big2'), ('mnone', 'nokey')]:
//       print('PFMERGE', dest, *src, r('PFMERGE', dest, *src)); show(dest); print('  PFCOUNT', r('PFCOUNT', dest))
//   for keys in [('a', 'b'), ('a', 'fivek'), ('big1', 'big2', 'nokey')]: print('PFCOUNT', *keys, r('PFCOUNT', *keys))
//   add('hk', 'e', 100000); print('hk PFCOUNT', r('PFCOUNT', 'hk')); show('hk')
//   add('g', 'g', 100000); print('PFCOUNT hk g', r('PFCOUNT', 'hk', 'g'))
//   add('m', 'e', 1000000); print('m PFCOUNT', r('PFCOUNT', 'm')); show('m')
//   print('PFCOUNT m g hk', r('PFCOUNT', 'm', 'g', 'hk'))
//   # Hand-made values (cache stale unless said): PFCOUNT, PFCOUNT with a missing key, PFDEBUG TODENSE, PFADD x y z.
//   stale = bytes(7) + b'\x80'
//   def dense(value, card=stale):
//       bits = sum(value << (6 * i) for i in range(16384)); return b'HYLL\0\0\0\0' + card + bits.to_bytes(12288, 'little')
//   for name, v in [('emptybody', ''), ('pastend', '7fff00'), ('early', '7ffe'), ('trailval', '7fff80'), ('valover', '7ffd83'),
//                   ('truncx', '41fe7e'), ('truncx_only', '7f')]:
//       v = b'HYLL\x01\0\0\0' + stale + bytes.fromhex(v); out = []
//       r('SET', 'k', v); out.append(r('PFCOUNT', 'k')); out.append(r('PFCOUNT', 'k', 'nokey'))
//       out.append(r('PFDEBUG', 'TODENSE', 'k')); r('SET', 'k', v); out.append(r('PFADD', 'k', 'x', 'y', 'z')); out.append(r('GET', 'k').hex())
//       print(name, out)
//   for name, v in [('reg51', dense(51)), ('reg63', dense(63)), ('reg40', dense(40)), ('cached', dense(63, (12345).to_bytes(8, 'little')))]:
//       r('SET', 'k', v); print(name, r('PFCOUNT', 'k'), r('GET', 'k')[:16].hex(), r('PFCOUNT', 'k', 'nokey'))
//
// The hand-made sparse layouts of SparseEditsMatchRedisOnHandMadeLayouts were made the same way:
//   r('CONFIG', 'SET', 'hll-sparse-max-bytes', max); r('SET', 'k', layout); r('PFADD', 'k', *elements); r('GET', 'k')
//   r('CONFIG', 'SET', 'hll-sparse-max-bytes', max); r('SET', 'd', layout); r('SET', 's', other); r('PFMERGE', 'd', 's'); r('GET', 'd')
// picked from 2400 random layouts (PFADD of elements hashing into their non-zero runs, and PFMERGE)
// that this implementation reproduced byte for byte, as the ones that tell apart the variants of
// the edit that differ from Redis.

using System.Security.Cryptography;
using System.Text;
using Diagnostics.Server.DataTypes;
using static Diagnostics.Server.DataTypes.HyperLogLog;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The HyperLogLog core against values and counts captured from the real redis-server 7.0.15
/// (see the script above): sparse and dense bytes after PFADD, the cache PFCOUNT writes, PFMERGE's
/// results, union counts, large cardinalities, PFDEBUG's texts; plus hostile values (corrupt
/// opcodes, wrong headers, random bytes) that must be refused without reading out of bounds.
/// </summary>
public sealed class HyperLogLogTests
{
    private const string StaleHeader = "48594c4c010000000000000000000080";   // sparse, cached cardinality 0 and stale

    // ------------------------------------------------------------ PFADD / PFCOUNT vectors

    [Fact]
    public void AnEmptyHyperLogLogHasRedisBytesBeforeAndAfterCounting()
    {
        Key? key = null;
        Assert.Equal(1, PfAdd(ref key));   // created: 1 even without elements
        Assert.Equal("48594c4c0100000000000000000000807fff", Hex(key!.Value));
        Assert.Equal(0, PfCount(key));
        Assert.Equal("48594c4c0100000000000000000000007fff", Hex(key.Value));   // cache written: 0, current
        Assert.Equal(0, PfAdd(ref key));   // exists, nothing added
    }

    [Fact]
    public void FewElementsMakeRedisSparseBytes()
    {
        var key = KeyWith("e", 5);
        Assert.Equal("48594c4c010000000000000000000080452580656084430d844fbe8440f48441b1", Hex(key.Value));
        Assert.True(TryCount(key.Value, out long count, out bool written));
        Assert.True(written);
        Assert.Equal(5, count);
        Assert.Equal("48594c4c010000000500000000000000452580656084430d844fbe8440f48441b1", Hex(key.Value));
        Assert.True(TryCount(key.Value, out count, out written));   // now from the cache
        Assert.False(written);
        Assert.Equal(5, count);
    }

    [Theory]
    [InlineData(100, 285, "53986fa020104b2d94c131f7d7b840674634568242921d84d01b767289a56a1d", 100, "aebee27e50c672722325ed27d2acb1011cc7138f9a0f43d52abc23308a822a44")]
    [InlineData(1000, 1906, "519a7f0764d633e025ff9f8cdeb30cd2f452e2ad37f729f6b9ea7a4699791162", 1008, "ab6313e24c05ff993730105e09ef76d5c0c4fcde58406d6a29d1889220a056e4")]
    [InlineData(5000, DenseLength, "0a4b61a05c269540574e1293e6e18e69a4e9cb96ade9ecb5b7ff490debf31722", 4968, "bd470063c39f632ff0572b22d3ae558cdc523a5ae6f47e7324ed636dcc84e2ec")]
    public void ElementsMakeRedisBytesAndCount(int elements, int length, string sha, long count, string shaAfterCount)
    {
        var key = KeyWith("e", elements);
        Assert.Equal(length, key.Length);
        Assert.Equal(length == DenseLength, IsDense(key.Value));
        Assert.Equal(sha, Sha(key.Value));
        Assert.Equal(count, PfCount(key));
        Assert.Equal(shaAfterCount, Sha(key.Value));
    }

    [Fact]
    public void PfAddRepliesAsRedisElementByElement()
    {
        Key? key = null;
        var replies = new StringBuilder();
        for (int pass = 0; pass < 2; pass++)
        {
            if (pass == 1)
                replies.Append('|');
            for (int i = 0; i < 300; i++)
                replies.Append(PfAdd(ref key, "e" + i));
        }
        string firstPass = new string('1', 144) + "0" + new string('1', 155);   // e144 grows no register
        Assert.Equal(firstPass + "|" + new string('0', 300), replies.ToString());
        Assert.Equal(713, key!.Length);
        Assert.Equal("ab79ebe4610713608b23a3804528ae5599497cc1c3c75823949c82ce2c86a485", Sha(key.Value));
    }

    [Fact]
    public void ASmallSparseLimitPromotesWhereRedisDoes()
    {
        var small = KeyWith("e", 40, sparseMaxBytes: 200);
        Assert.False(IsDense(small.Value));
        Assert.Equal(130, small.Length);
        Assert.Equal("40e0c6ddac0b314042acbef95fabfecf6738b1df4ec3168ec94b46bb12515ff9", Sha(small.Value));

        var promoted = KeyWith("e", 200, sparseMaxBytes: 200);
        Assert.True(IsDense(promoted.Value));
        Assert.Equal("5ebc6a16421a09d452a0c5212c1445956d93152729b32dedbcfc906d3effd88b", Sha(promoted.Value));
    }

    [Fact]
    public void LargeCardinalitiesCountAsRedis()
    {
        var hundredThousand = KeyWith("e", 100_000);
        Assert.Equal(100853, PfCount(hundredThousand));
        Assert.Equal("548dba672576d8a299d51943c2728e21beda0aea57391bd87567dba08eed8e4e", Sha(hundredThousand.Value));

        var g = KeyWith("g", 100_000);
        Assert.Equal(201822, PfCount(hundredThousand, g));

        var million = KeyWith("e", 1_000_000);
        Assert.Equal(991657, PfCount(million));
        Assert.Equal("9a4c3b1fc4651eeeaa0333e9a4b1c5bdec1f002a185b11590d97d312ad7c535b", Sha(million.Value));
        Assert.Equal(1091921, PfCount(million, g, hundredThousand));
    }

    // ------------------------------------------------------------ PFMERGE / union vectors

    [Fact]
    public void MergesAndUnionsMatchRedis()
    {
        var a = KeyWith("e", 100);
        var b = KeyWith("e", 200, start: 50);
        var fiveThousand = KeyWith("e", 5000);

        Key? sparse = null;
        Assert.Null(PfMerge(ref sparse, a, b));
        Assert.Equal(617, sparse!.Length);
        Assert.Equal("331919ca217904e3d73bba3a045bba51ac35cc0a8d245525cff07f691685d169", Sha(sparse.Value));
        Assert.Equal(251, PfCount(sparse));

        Key? dense = null;
        Assert.Null(PfMerge(ref dense, a, fiveThousand));
        Assert.Equal("0a4b61a05c269540574e1293e6e18e69a4e9cb96ade9ecb5b7ff490debf31722", Sha(dense!.Value));
        Assert.Equal(4968, PfCount(dense));

        Key? existing = KeyWith("x", 30);   // the destination's own registers take part
        Assert.Null(PfMerge(ref existing, a, b));
        Assert.Equal(671, existing!.Length);
        Assert.Equal("8a789929fc35cef4745d41701cac6473af544348341811660327dc094aa808e6", Sha(existing.Value));
        Assert.Equal(279, PfCount(existing));

        // Two sparse inputs whose union outgrows hll-sparse-max-bytes: promoted midway.
        var big1 = KeyWith("e", 1000);
        var big2 = KeyWith("f", 1000);
        Key? promoted = null;
        Assert.Null(PfMerge(ref promoted, big1, big2));
        Assert.True(IsDense(promoted!.Value));
        Assert.Equal("d7179cd89974bbfe6ae8225af25ad05da74ca7e947dcb546cbe1470d97da6ecf", Sha(promoted.Value));
        Assert.Equal(2024, PfCount(promoted));

        Key? nothing = null;
        Assert.Null(PfMerge(ref nothing, [null]));
        Assert.Equal("48594c4c0100000000000000000000807fff", Hex(nothing!.Value));

        Assert.Equal(251, PfCount(a, b));
        Assert.Equal(4968, PfCount(a, fiveThousand));
        Assert.Equal(2024, PfCount(big1, big2, null));
    }

    // ------------------------------------------------------------ PFDEBUG

    [Fact]
    public void DecodeGetRegAndToDenseMatchPfDebug()
    {
        var few = KeyWith("e", 5);
        Assert.Equal("Z:1318 v:1,1 Z:9569 v:2,1 Z:782 v:2,1 Z:4031 v:2,1 Z:245 v:2,1 Z:434", Decode(few.Value));

        var hundred = KeyWith("e", 100);
        PfCount(hundred);
        string decoded = Decode(hundred.Value);
        Assert.Equal(1157, decoded.Length);
        Assert.Equal("a48a3acf49a662942318c4d54ea8d8acfcff664fdfaea48200b79baf7db509d6", Sha(Encoding.ASCII.GetBytes(decoded)));

        var registers = new byte[RegisterCount];
        Assert.True(TryReadRegisters(hundred.Value, registers));
        Assert.Equal("106cd7d2f05cdd4e300998f4781e1d3776595a4d664162ee9151cf3f89524461", Sha(registers));

        // GETREG (and TODENSE) first make the value dense; the cache stays as it was.
        var dense = new byte[DenseLength];
        Assert.True(TryToDense(hundred.Value, dense));
        Assert.Equal("6403f2d177adaac01f42ef11a3118ceb5ba32e16c5cc33661a1dc56bd68815b9", Sha(dense));
        Assert.True(TryReadRegisters(dense, registers));
        Assert.Equal("106cd7d2f05cdd4e300998f4781e1d3776595a4d664162ee9151cf3f89524461", Sha(registers));
        for (int i = 0; i < RegisterCount; i++)
            Assert.Equal(registers[i], DenseGet(dense, i));

        Assert.Equal("sparse", Encoding.ASCII.GetString(EncodingName(hundred.Value)));
        Assert.Equal("dense", Encoding.ASCII.GetString(EncodingName(dense)));
        Assert.Equal("", Decode(Bytes("48594c4c010000000000000000000080")));
    }

    [Fact]
    public void AddingAndCountingDoNotAllocate()
    {
        var sparse = new byte[DefaultSparseMaxBytes + MaxSparseGrowth];
        var promoted = new byte[DenseLength];
        var dense = new byte[DenseLength];
        var max = new byte[RegisterCount];
        var element = new byte[16];
        Assert.True(Run(3_000));   // warm up (JIT tiers, statics) through the promotion
        long before = GC.GetAllocatedBytesForCurrentThread();
        bool ok = Run(3_000);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.True(ok);
        Assert.Equal(0, allocated);

        // No asserts inside: xunit's own comparers allocate.
        bool Run(int elements)
        {
            WriteEmptySparse(sparse);
            int length = EmptySparseLength;
            bool isDense = false, ok = true;
            dense.AsSpan().Clear();
            "HYLL"u8.CopyTo(dense);
            for (int i = 0; i < elements; i++)
            {
                ok &= i.TryFormat(element, out int digits);
                ElementPosition(element.AsSpan(0, digits), out int index, out int count);
                DenseSet(dense, index, count);
                if (isDense)
                {
                    DenseSet(promoted, index, count);
                }
                else if (SparseSet(sparse, ref length, index, count, DefaultSparseMaxBytes) == SparseSetResult.NeedsDense)
                {
                    ok &= TryToDense(sparse.AsSpan(0, length), promoted) && DenseSet(promoted, index, count);
                    isDense = true;
                }
                if (i % 100 == 0)
                    ok &= TryCount(isDense ? promoted : sparse.AsSpan(0, length), out _, out _);
            }
            InvalidateCache(dense);
            ok &= TryCount(dense, out long count1, out _) & TryEstimate(promoted, out long count2);
            max.AsSpan().Clear();
            ok &= TryMergeInto(dense, max) & TryMergeInto(promoted, max);
            ok &= isDense && count1 == count2 && CountRaw(max) == count1;
            return ok;
        }
    }

    [Fact]
    public void SelfTestPasses()
    {
        Assert.True(SelfTest(out string? error), error);
        Assert.Null(error);
    }

    // ------------------------------------------------------------ hostile values

    [Theory]
    [InlineData("48594c58010000000000000000000080 7fff")]   // magic HYLX
    [InlineData("48594c4c020000000000000000000080 7fff")]   // encoding 2
    [InlineData("48594c4c01")]                              // shorter than a header
    [InlineData("")]
    public void ValuesWithABadHeaderAreNotHyperLogLogs(string hex)
    {
        var value = Bytes(hex);
        Assert.False(IsValid(value));
        AssertRefused(value);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(100)]
    [InlineData(DenseLength - 1)]
    [InlineData(DenseLength + 1)]
    public void DenseValuesOfTheWrongLengthAreNotHyperLogLogs(int length)
    {
        var value = new byte[length];
        if (length >= HeaderSize)
            Bytes("48594c4c000000000000000000000080").CopyTo(value, 0);
        Assert.False(IsValid(value));
        AssertRefused(value);
    }

    [Theory]
    // The opcodes after a stale sparse header; PFCOUNT/TODENSE/merge refuse them, PFADD x y z's reply and bytes.
    [InlineData("", true, -1, StaleHeader)]                                             // no opcodes
    [InlineData("7fff00", true, 1, StaleHeader + "61848058cd8845a0840800")]             // runs past 16384
    [InlineData("7ffe", true, 1, StaleHeader + "61848058cd8845a08407")]                  // ends at 16383
    [InlineData("7fff80", true, 1, StaleHeader + "61848058cd8845a0840880")]             // a VAL after 16384
    [InlineData("7ffd83", true, 1, StaleHeader + "61848058cd8845a0840683")]             // a VAL crossing 16384
    [InlineData("7f", true, -1, StaleHeader + "7f")]                                     // an XZERO cut short: 16129
    [InlineData("41fe7e", false, 1, StaleHeader + "41fe5f858058cd8845a084")]            // cut XZERO that adds up: Redis accepts it
    public void CorruptSparseValuesAreRefusedAsRedisDoes(string opcodes, bool corrupt, int pfAddReply, string afterPfAdd)
    {
        var value = Bytes(StaleHeader + opcodes);
        Assert.True(IsValid(value));

        var copy = value.ToArray();
        Assert.Equal(!corrupt, TryCount(copy, out long count, out _));
        Assert.Equal(!corrupt, TryEstimate(value, out _));
        Assert.Equal(!corrupt, TryMergeInto(value, new byte[RegisterCount]));
        Assert.Equal(!corrupt, TryToDense(value, new byte[DenseLength]));
        if (!corrupt)
            Assert.Equal(0, count);
        else
            Assert.Equal(value, copy);   // nothing cached

        Key? key = Key.From(value);
        Assert.Equal(pfAddReply == -1 ? null : pfAddReply, PfAdd(ref key, "x", "y", "z"));
        Assert.Equal(afterPfAdd, Hex(key!.Value));
    }

    [Fact]
    public void DenseRegistersNoEstimateFitsCountAsRedisDoes()
    {
        // Every register at 51 (or 63) leaves the estimator dividing by zero: Redis replies
        // llroundl's x86 "integer indefinite" and its cache stays stale.
        foreach (int register in new[] { 51, 63 })
        {
            var value = DenseWith(register, "0000000000000080");
            Assert.True(TryCount(value, out long count, out bool written));
            Assert.Equal(long.MinValue, count);
            Assert.True(written);
            Assert.Equal("48594c4c000000000000000000000080", Hex(value.AsSpan(0, HeaderSize)));
            Assert.Equal(long.MinValue, CountRaw(Merged(value)));
        }

        var forty = DenseWith(40, "0000000000000080");
        Assert.True(TryCount(forty, out long fortyCount, out _));
        Assert.Equal(12994641697113596, fortyCount);
        Assert.Equal("48594c4c00000000fc0557ca8e2a2e00", Hex(forty.AsSpan(0, HeaderSize)));
        Assert.Equal(12994641697113596, CountRaw(Merged(forty)));

        // A current cache is answered whatever the registers say.
        var cached = DenseWith(63, "3930000000000000");
        Assert.True(TryCount(cached, out long cachedCount, out bool cachedWritten));
        Assert.Equal(12345, cachedCount);
        Assert.False(cachedWritten);
        Assert.Equal(long.MinValue, CountRaw(Merged(cached)));
    }

    [Fact]
    public void RandomValuesNeverThrowAndTheReadersAgree()
    {
        var random = new Random(20240607);
        for (int round = 0; round < 20_000; round++)
        {
            byte[] value = round % 2 == 0 ? RandomSparse(random) : Mutate(RandomSparse(random, canonical: true), random);
            bool valid = TryEstimate(value, out long estimate);
            var merged = new byte[RegisterCount];
            Assert.Equal(valid, TryMergeInto(value, merged));
            var dense = new byte[DenseLength];
            Assert.Equal(valid, TryToDense(value, dense));
            Assert.Equal(valid, TryCount(value.ToArray(), out _, out _));
            if (valid)
            {
                Assert.True(TryEstimate(dense, out long denseEstimate));
                Assert.Equal(estimate, denseEstimate);
                Assert.Equal(estimate, CountRaw(merged));
            }

            var text = new byte[SparseDecodeLength(value)];
            Assert.Equal(text.Length, WriteSparseDecode(value, text));

            // PFADD on whatever is there: never out of bounds, whatever it answers.
            var buffer = new byte[value.Length + MaxSparseGrowth];
            value.CopyTo(buffer, 0);
            int length = value.Length;
            SparseSet(buffer, ref length, random.Next(RegisterCount), random.Next(1, 33), random.Next(value.Length, 4000));
        }
    }

    [Fact]
    public void SparseSetNeverWritesPastLengthPlusMaxSparseGrowth()
    {
        var random = new Random(77);
        const int Guard = 32;
        for (int round = 0; round < 20_000; round++)
        {
            byte[] value = RandomSparse(random, canonical: round % 3 == 0);
            if (round % 5 == 0)
                value = value[..^1];   // possibly an XZERO cut short
            var buffer = new byte[value.Length + MaxSparseGrowth + Guard];
            random.NextBytes(buffer);
            value.CopyTo(buffer, 0);
            var beyond = buffer[(value.Length + MaxSparseGrowth)..];
            int length = value.Length;
            int maxBytes = random.Next(2) == 0 ? int.MaxValue : value.Length + random.Next(0, 4);

            var result = SparseSet(buffer, ref length, random.Next(RegisterCount), random.Next(1, 33), maxBytes);

            Assert.Equal(beyond, buffer[(value.Length + MaxSparseGrowth)..]);
            Assert.InRange(length, HeaderSize, value.Length + MaxSparseGrowth);
            if (result != SparseSetResult.Changed)
            {
                Assert.Equal(value.Length, length);
                Assert.Equal(value, buffer[..length]);
            }

            // The exact room is enough.
            var exact = new byte[value.Length + MaxSparseGrowth];
            value.CopyTo(exact, 0);
            length = value.Length;
            SparseSet(exact, ref length, random.Next(RegisterCount), random.Next(1, 33), maxBytes);
        }
    }

    [Fact]
    public void SparseSetPromotesForValuesAboveThirtyTwoWithoutTouchingTheValue()
    {
        var buffer = new byte[EmptySparseLength + MaxSparseGrowth];
        WriteEmptySparse(buffer);
        int length = EmptySparseLength;
        Assert.Equal(SparseSetResult.NeedsDense, SparseSet(buffer, ref length, 5, 33, DefaultSparseMaxBytes));
        Assert.Equal(EmptySparseLength, length);
        Assert.True(IsCacheValid(buffer));
        Assert.Equal(SparseSetResult.Changed, SparseSet(buffer, ref length, 5, 32, DefaultSparseMaxBytes));
        Assert.False(IsCacheValid(buffer));   // an edit marks the cache stale itself, as hllSparseSet does
        Assert.Equal("z:5 v:32,1 Z:16378", Decode(buffer.AsSpan(0, length)));
        Assert.Equal(SparseSetResult.Unchanged, SparseSet(buffer, ref length, 5, 7, DefaultSparseMaxBytes));
    }

    [Theory]
    // Hand-made sparse layouts (after a stale header) as Redis edits them, with hll-sparse-max-bytes
    // at, or a few bytes above, the value's length: "e..." elements are PFADDed; "+layout" is
    // PFMERGEd into the value. The result: the opcodes after the header, or the SHA-256 of the whole
    // value once dense. Chosen so that every bound of the edit (ZERO/XZERO split at 64, the 4-long
    // VAL merge, the 5-opcode merge scan from the previous opcode, the limit's comparison) shows.
    [InlineData(35, "6d818117828440544a4a80858385868447b2", "e65905,e128199,e145440", "sha:15c40b1c6c431d626d6e8d966078526bd87943fa6b859b9c797d97a4b2ed1ef6")]
    [InlineData(33, "622d808080812d495e8420407753a5", "e54416", "622d808080812d495e84202780404e53a5")]
    [InlineData(30, "755185812c4866828181420e", "e83453", "755185810f841b4866828181420e")]
    [InlineData(100000, "49f581808286404961768483808107542f", "e100601,e78217", "49f58180828604843f800261768483808107542f")]
    [InlineData(37, "5b5740438585285ca8823d8183404e878046f2", "e98006,e80787", "5b5725841c87285ca8820280398183404e878046f2")]
    [InlineData(36, "525b8782854e6a858686408b8585407a5e1c", "e162276", "525b8782854e6a8586864056843387407a5e1c")]
    [InlineData(33, "56d9810589407a5a3c80800f854e4f", "e4440", "56d9810589228c40565a3c80800f854e4f")]
    [InlineData(100000, "5c510c8780814bd58081375788", "e73507", "5c510480068780814bd58081375788")]
    [InlineData(36, "492d818582838b874e928212018b2e8367dc", "e86859,e157631", "492d81858384818b874e928212018b2e8367dc")]
    [InlineData(100000, "583740732386894f663685855788", "e190407,e28385,e35293", "5837288408843f228086894f663685855788")]
    [InlineData(100000, "56438084855419398002871b553f", "+53b9808758c887805372", "53b98087428480865419398002871b41c787805372")]
    [InlineData(37, "59c7408383818581174054495e83805bd8", "+50cb85173144c7832a842769c7", "sha:075f0c78764c954970310d13299a524cb655fa894e7cfa55cfd5b7962aa2dd20")]
    [InlineData(40, "48c93e87828180876dfc8a2f848748b3", "+51618140754c3983863261b1", "48c93e8782818087484a814caf838658f88a2f848748b3")]
    public void SparseEditsMatchRedisOnHandMadeLayouts(int sparseMaxBytes, string opcodes, string change, string expected)
    {
        Key? key = Key.From(Bytes(StaleHeader + opcodes));
        if (change.StartsWith('+'))
        {
            Key? source = Key.From(Bytes(StaleHeader + change[1..]));
            Assert.Null(PfMerge(sparseMaxBytes, ref key, source));
        }
        else
        {
            Assert.Equal(1, PfAdd(ref key, sparseMaxBytes, change.Split(',')));
        }
        if (expected.StartsWith("sha:"))
        {
            Assert.True(IsDense(key!.Value));
            Assert.Equal(expected[4..], Sha(key.Value));
        }
        else
        {
            Assert.Equal(StaleHeader + expected, Hex(key!.Value));
        }
    }

    // ------------------------------------------------------------ a key as the command layer holds it

    /// <summary>A key's value as the command layer will keep it: a buffer with room, and its length.</summary>
    private sealed class Key
    {
        private byte[] _buffer;

        private Key(byte[] buffer, int length)
        {
            _buffer = buffer;
            Length = length;
        }

        public int Length;

        public Span<byte> Value => _buffer.AsSpan(0, Length);

        public Span<byte> Buffer => _buffer;

        public static Key Empty()
        {
            var key = new Key(new byte[EmptySparseLength], EmptySparseLength);
            WriteEmptySparse(key._buffer);
            return key;
        }

        public static Key From(ReadOnlySpan<byte> value) => new(value.ToArray(), value.Length);

        public void Reserve(int capacity)
        {
            if (_buffer.Length < capacity)
                Array.Resize(ref _buffer, capacity);
        }

        public void Replace(byte[] value)
        {
            _buffer = value;
            Length = value.Length;
        }

        /// <summary>hllAdd: 1 when a register grew, 0 when not, -1 when the value is corrupt.</summary>
        public int Add(ReadOnlySpan<byte> element, int sparseMaxBytes)
        {
            ElementPosition(element, out int index, out int count);
            if (IsDense(Value))
                return DenseSet(Value, index, count) ? 1 : 0;
            Reserve(Length + MaxSparseGrowth);
            switch (SparseSet(_buffer, ref Length, index, count, sparseMaxBytes))
            {
                case SparseSetResult.Unchanged:
                    return 0;
                case SparseSetResult.Changed:
                    return 1;
                case SparseSetResult.Corrupt:
                    return -1;
            }
            var dense = new byte[DenseLength];
            if (!TryToDense(Value, dense))
                return -1;
            Replace(dense);
            Assert.True(DenseSet(Value, index, count));
            return 1;
        }
    }

    /// <summary>PFADD: 1 or 0, null for INVALIDOBJ.</summary>
    private static int? PfAdd(ref Key? key, params string[] elements) => PfAdd(ref key, DefaultSparseMaxBytes, elements);

    private static int? PfAdd(ref Key? key, int sparseMaxBytes, params string[] elements)
    {
        int updated = 0;
        if (key is null)
        {
            key = Key.Empty();
            updated++;
        }
        Assert.True(IsValid(key.Value));
        foreach (var element in elements)
        {
            switch (key.Add(Encoding.ASCII.GetBytes(element), sparseMaxBytes))
            {
                case 1:
                    updated++;
                    break;
                case -1:
                    return null;
            }
        }
        if (updated > 0)
            InvalidateCache(key.Value);
        return updated > 0 ? 1 : 0;
    }

    /// <summary>PFMERGE: null for OK, else the error.</summary>
    private static string? PfMerge(ref Key? destination, params Key?[] sources) => PfMerge(DefaultSparseMaxBytes, ref destination, sources);

    private static string? PfMerge(int sparseMaxBytes, ref Key? destination, params Key?[] sources)
    {
        var max = new byte[RegisterCount];
        bool useDense = false;
        foreach (var key in sources.Prepend(destination))
        {
            if (key is null)
                continue;
            if (!IsValid(key.Value))
                return NotHyperLogLogError;
            useDense |= IsDense(key.Value);
            if (!TryMergeInto(key.Value, max))
                return InvalidObjectError;
        }
        destination ??= Key.Empty();
        if (useDense && !IsDense(destination.Value))
        {
            var dense = new byte[DenseLength];
            if (!TryToDense(destination.Value, dense))
                return InvalidObjectError;
            destination.Replace(dense);
        }
        if (IsDense(destination.Value))
        {
            DenseMergeRegisters(destination.Value, max);
        }
        else
        {
            destination.Reserve(Math.Max(destination.Length, sparseMaxBytes) + MaxSparseGrowth);
            var scratch = new byte[DenseLength];
            if (SparseMergeRegisters(destination.Buffer, ref destination.Length, max, sparseMaxBytes, scratch))
                destination.Replace(scratch);
        }
        InvalidateCache(destination.Value);
        return null;
    }

    /// <summary>PFCOUNT of one key (through the cache) or of several (their union).</summary>
    private static long PfCount(params Key?[] keys)
    {
        if (keys.Length == 1)
        {
            Assert.True(TryCount(keys[0]!.Value, out long count, out _));
            return count;
        }
        var max = new byte[RegisterCount];
        foreach (var key in keys)
        {
            if (key is not null)
                Assert.True(TryMergeInto(key.Value, max));
        }
        return CountRaw(max);
    }

    private static Key KeyWith(string prefix, int count, int start = 0, int sparseMaxBytes = DefaultSparseMaxBytes)
    {
        Key? key = null;
        PfAdd(ref key, sparseMaxBytes);
        Span<byte> element = stackalloc byte[32];
        Encoding.ASCII.GetBytes(prefix, element);
        for (int i = start; i < start + count; i++)
        {
            Assert.True(i.TryFormat(element[prefix.Length..], out int digits));
            Assert.NotEqual(-1, key!.Add(element[..(prefix.Length + digits)], sparseMaxBytes));
        }
        InvalidateCache(key!.Value);
        return key;
    }

    // ------------------------------------------------------------ helpers

    private static void AssertRefused(byte[] value)
    {
        Assert.False(TryCount(value.ToArray(), out _, out _));
        Assert.False(TryEstimate(value, out _));
        Assert.False(TryMergeInto(value, new byte[RegisterCount]));
        Assert.False(TryToDense(value, new byte[DenseLength]));
        Assert.False(TryReadRegisters(value, new byte[RegisterCount]));
    }

    private static byte[] DenseWith(int register, string cardHex)
    {
        var value = new byte[DenseLength];
        Bytes("48594c4c00000000" + cardHex).CopyTo(value, 0);
        for (int i = 0; i < RegisterCount; i++)
            DenseSet(value, i, register);
        return value;
    }

    private static byte[] Merged(byte[] value)
    {
        var max = new byte[RegisterCount];
        Assert.True(TryMergeInto(value, max));
        return max;
    }

    /// <summary>A sparse value covering 16384 registers with random opcodes; canonical ones only as Redis writes them.</summary>
    private static byte[] RandomSparse(Random random, bool canonical = false)
    {
        var value = new List<byte>(Bytes(StaleHeader));
        int left = RegisterCount;
        while (left > 0)
        {
            double kind = random.NextDouble();
            if (kind < 0.5)
            {
                int run = Math.Min(random.Next(1, 5), left);
                int v = random.Next(3) == 0 ? random.Next(1, 33) : random.Next(1, 3);
                value.Add((byte)(0x80 | (v - 1) << 2 | (run - 1)));
                left -= run;
            }
            else if (kind < 0.8 || (canonical && left <= 64))
            {
                int run = Math.Min(random.Next(1, 65), left);
                value.Add((byte)(run - 1));
                left -= run;
            }
            else
            {
                int run = Math.Min(random.Next(canonical ? 65 : 1, random.Next(2) == 0 ? 500 : 4000), left);
                if (canonical && run <= 64)
                    continue;
                value.Add((byte)(0x40 | (run - 1) >> 8));
                value.Add((byte)(run - 1));
                left -= run;
            }
        }
        return value.ToArray();
    }

    private static byte[] Mutate(byte[] value, Random random)
    {
        switch (random.Next(4))
        {
            case 0:
                return value[..random.Next(HeaderSize, value.Length + 1)];
            case 1:
                value[random.Next(HeaderSize, value.Length)] = (byte)random.Next(256);
                return value;
            case 2:
                var longer = new byte[value.Length + random.Next(1, 8)];
                random.NextBytes(longer);
                value.CopyTo(longer, 0);
                return longer;
            default:
                var noise = new byte[HeaderSize + random.Next(0, 40)];
                random.NextBytes(noise);
                value.AsSpan(0, HeaderSize).CopyTo(noise);
                return noise;
        }
    }

    private static string Decode(ReadOnlySpan<byte> value)
    {
        var text = new byte[SparseDecodeLength(value)];
        int written = WriteSparseDecode(value, text);
        Assert.Equal(text.Length, written);
        return Encoding.ASCII.GetString(text);
    }

    private static byte[] Bytes(string hex) => Convert.FromHexString(hex.Replace(" ", ""));

    private static string Hex(ReadOnlySpan<byte> bytes) => Convert.ToHexStringLower(bytes);

    private static string Sha(ReadOnlySpan<byte> bytes) => Convert.ToHexStringLower(SHA256.HashData(bytes));
}
