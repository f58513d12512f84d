using System.Diagnostics;
using System.Globalization;
using System.Text;

namespace Diagnostics.Benchmarks;

/// <summary>A generated multi-part AOF: its scratch --dir (deleted on Dispose) and what it holds.</summary>
public sealed record GeneratedAof(ScratchDirectory Directory, long Keys, long KeysWithExpiry, long Bytes, TimeSpan GenerationTime) : IDisposable
{
    public string ManifestPath => Path.Combine(Directory.Path, AofWriteSuite.AofDirectoryName, AofGenerator.ManifestName);

    public void Dispose() => Directory.Dispose();
}

/// <summary>
/// Writes an AOF in Redis 7's multi-part layout, as a server started with `--appendonly yes
/// --dir D` finds it: D/appendonlydir/ holding the manifest, a base file and an empty incr file.
/// The base file is RESP multibulk commands, as a rewrite with aof-use-rdb-preamble no writes
/// them: SELECT 0, then SET key:&lt;n&gt; &lt;value&gt; for n = 0, 1, ... until the size is reached.
/// Values are 192-320 printable bytes (256 on average) from a fixed-seed PRNG, so every run
/// generates the same file; one key in <see cref="ExpiryEvery"/> carries PXAT with a
/// far-future time, so loading also parses expiry options and fills the expires table.
/// </summary>
public static class AofGenerator
{
    public const string FileName = "appendonly.aof";
    public const string BaseName = FileName + ".1.base.aof";
    public const string IncrName = FileName + ".1.incr.aof";
    public const string ManifestName = FileName + ".manifest";
    public const int Seed = 20240607;
    public const int ExpiryEvery = 10;
    public const int MinValueLength = 192;
    public const int MaxValueLength = 320;
    /// <summary>2100-01-01T00:00:00Z in unix ms: far enough that no key expires while loading.</summary>
    public const long ExpireAtMs = 4_102_444_800_000;

    private static readonly byte[] Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"u8.ToArray();

    public static GeneratedAof Generate(long targetBytes)
    {
        var watch = Stopwatch.StartNew();
        var directory = ScratchDirectory.Create("diagnostics-bench-aof-load-");
        try
        {
            string aofDirectory = Path.Combine(directory.Path, AofWriteSuite.AofDirectoryName);
            Directory.CreateDirectory(aofDirectory);
            var (keys, withExpiry, bytes) = WriteBase(Path.Combine(aofDirectory, BaseName), targetBytes);
            File.WriteAllBytes(Path.Combine(aofDirectory, IncrName), []);
            // Redis 7's manifest: one line per file, base first, each "file <name> seq <n> type <b|i>".
            File.WriteAllText(Path.Combine(aofDirectory, ManifestName),
                $"file {BaseName} seq 1 type b\nfile {IncrName} seq 1 type i\n", Encoding.ASCII);
            return new GeneratedAof(directory, keys, withExpiry, bytes, watch.Elapsed);
        }
        catch
        {
            directory.Dispose();
            throw;
        }
    }

    /// <summary>Runs redis-check-aof on the manifest, which checks it and every file it lists; throws unless all pass.</summary>
    public static void Verify(string redisCheckAof, GeneratedAof aof)
    {
        var result = ExternalTools.Run(redisCheckAof, [aof.ManifestPath], TimeSpan.FromMinutes(10));
        string output = result.StandardOutput + result.StandardError;
        if (result.ExitCode != 0 || !output.Contains("All AOF files and manifest are valid", StringComparison.Ordinal))
            throw new HarnessException($"the generated AOF failed `redis-check-aof {aof.ManifestPath}` (exit code {result.ExitCode}), so it cannot be used to compare loading:\n{output}");
    }

    private static (long Keys, long WithExpiry, long Bytes) WriteBase(string path, long targetBytes)
    {
        var random = new Random(Seed);
        var writer = new RespFileWriter(path);
        try
        {
            writer.Command("SELECT"u8, "0"u8);
            Span<byte> key = stackalloc byte[32];
            Span<byte> value = stackalloc byte[MaxValueLength];
            Span<byte> expireAt = stackalloc byte[20];
            "key:"u8.CopyTo(key);
            ExpireAtMs.TryFormat(expireAt, out int expireAtLength, provider: CultureInfo.InvariantCulture);
            long keys = 0, withExpiry = 0;
            while (writer.Written < targetBytes)
            {
                keys.TryFormat(key[4..], out int digits, provider: CultureInfo.InvariantCulture);
                var valueBytes = value[..random.Next(MinValueLength, MaxValueLength + 1)];
                random.NextBytes(valueBytes);
                foreach (ref byte b in valueBytes)
                    b = Alphabet[b & 63];
                if (random.Next(ExpiryEvery) == 0)
                {
                    writer.Command("SET"u8, key[..(4 + digits)], valueBytes, "PXAT"u8, expireAt[..expireAtLength]);
                    withExpiry++;
                }
                else
                {
                    writer.Command("SET"u8, key[..(4 + digits)], valueBytes);
                }
                keys++;
            }
            writer.Flush();
            return (keys, withExpiry, writer.Written);
        }
        finally
        {
            writer.Dispose();
        }
    }

    /// <summary>Length of the RESP multibulk encoding of a command (what an AOF stores for it).</summary>
    public static long RespCommandLength(IReadOnlyList<string> arguments)
    {
        long length = 1 + Digits(arguments.Count) + 2;
        foreach (string argument in arguments)
        {
            int bytes = Encoding.UTF8.GetByteCount(argument);
            length += 1 + Digits(bytes) + 2 + bytes + 2;
        }
        return length;
    }

    private static int Digits(long value) => value.ToString(CultureInfo.InvariantCulture).Length;

    /// <summary>RESP multibulk commands into a file through a 1 MiB block; allocation-free per command.</summary>
    private sealed class RespFileWriter(string path) : IDisposable
    {
        private readonly FileStream _file = new(path, FileMode.CreateNew, FileAccess.Write, FileShare.None, 1, FileOptions.SequentialScan);
        private readonly byte[] _block = new byte[1 << 20];
        private int _used;

        public long Written { get; private set; }

        public void Command(ReadOnlySpan<byte> a, ReadOnlySpan<byte> b)
        {
            Header('*', 2);
            Bulk(a);
            Bulk(b);
        }

        public void Command(ReadOnlySpan<byte> a, ReadOnlySpan<byte> b, ReadOnlySpan<byte> c)
        {
            Header('*', 3);
            Bulk(a);
            Bulk(b);
            Bulk(c);
        }

        public void Command(ReadOnlySpan<byte> a, ReadOnlySpan<byte> b, ReadOnlySpan<byte> c, ReadOnlySpan<byte> d, ReadOnlySpan<byte> e)
        {
            Header('*', 5);
            Bulk(a);
            Bulk(b);
            Bulk(c);
            Bulk(d);
            Bulk(e);
        }

        private void Bulk(ReadOnlySpan<byte> data)
        {
            Header('$', data.Length);
            Raw(data);
            Raw("\r\n"u8);
        }

        private void Header(char kind, int count)
        {
            Span<byte> header = stackalloc byte[16];
            header[0] = (byte)kind;
            count.TryFormat(header[1..], out int digits, provider: CultureInfo.InvariantCulture);
            header[1 + digits] = (byte)'\r';
            header[2 + digits] = (byte)'\n';
            Raw(header[..(3 + digits)]);
        }

        private void Raw(ReadOnlySpan<byte> data)
        {
            if (_used + data.Length > _block.Length)
                Flush();
            data.CopyTo(_block.AsSpan(_used));
            _used += data.Length;
            Written += data.Length;
        }

        public void Flush()
        {
            _file.Write(_block, 0, _used);
            _used = 0;
        }

        public void Dispose()
        {
            _file.Dispose();
        }
    }
}
