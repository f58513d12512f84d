using System.Buffers;
using System.Text;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Diagnostics.Disk;
using Diagnostics.Server.Persistence;
using Diagnostics.Server.Protocol;
using Diagnostics.Server.UnitTests.Infrastructure;
using Xunit.Abstractions;

namespace Diagnostics.Server.UnitTests.Persistence;

/// <summary>
/// The AOF's group commit in process, on real files: many threads append their records as
/// connections do (<see cref="AppendOnlyFile.Append"/>) and hold their "reply" until
/// <see cref="AppendOnlyFile.AcknowledgedOffset"/> covers them, as a connection's flush waits.
/// The fsync counts come from the process-wide disk accounting, so these tests run alone
/// (<see cref="InProcessServerCollection"/>).
/// </summary>
[Collection(InProcessServerCollection.Name)]
public sealed class AofGroupCommitTests(ITestOutputHelper output) : IDisposable
{
    private static readonly TimeSpan Guard = TimeSpan.FromSeconds(60);
    private const int Writers = 16;
    private const int RecordsPerWriter = 100;
    // Next to the test assembly, not in the system temp folder: that may be a tmpfs, where an
    // fsync costs nothing and so nothing waits long enough to be grouped.
    private readonly string _dir = Directory.CreateDirectory(Path.Combine(AppContext.BaseDirectory, "aof-group-commit-" + Guid.NewGuid().ToString("N"))).FullName;

    private string AppendDirectory => Path.Combine(_dir, "appendonlydir");

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public void UnderAlwaysEveryReplyWaitsForAnFsyncAndOneFsyncServesManyWaiters()
    {
        long fsyncsBefore = Fsyncs();
        var outcome = Run("always");
        long fsyncs = Fsyncs() - fsyncsBefore;

        Assert.All(outcome.Errors, error => Assert.Null(error));
        AssertFileHoldsEveryRecordInOrder(outcome.IncrPath);
        int records = Writers * RecordsPerWriter;
        // Each writer waits for its record to be synced before sending the next, so without group
        // commit there would be one fsync per record. Sixteen writers share them.
        output.WriteLine($"appendfsync always: {records} records from {Writers} writers in {outcome.Elapsed.TotalMilliseconds:0} ms, {fsyncs} fsyncs ({(double)records / Math.Max(1, fsyncs):0.0} records each)");
        Assert.True(fsyncs > 0, "no fsync at all under appendfsync always");
        Assert.True(fsyncs * 2 <= records, $"{fsyncs} fsyncs for {records} records: the waiters did not share them");
    }

    [Fact]
    public void UnderEverySecTheWaitersWriteTheirGroupsThemselvesAndEveryAcknowledgedRecordIsInTheFile()
    {
        long fsyncsBefore = Fsyncs();
        var outcome = Run("everysec");
        long fsyncs = Fsyncs() - fsyncsBefore;

        Assert.All(outcome.Errors, error => Assert.Null(error));
        AssertFileHoldsEveryRecordInOrder(outcome.IncrPath);
        output.WriteLine($"appendfsync everysec: {Writers * RecordsPerWriter} records in {outcome.Elapsed.TotalMilliseconds:0} ms, {fsyncs} fsyncs");
        // Replies wait for the kernel to have the bytes, not for the disk: a sync a second, and
        // the one the stop makes.
        Assert.True(fsyncs <= 2 + (long)outcome.Elapsed.TotalSeconds * 2, $"{fsyncs} fsyncs in {outcome.Elapsed} under everysec");
    }

    private sealed record RunOutcome(string IncrPath, string?[] Errors, TimeSpan Elapsed);

    /// <summary>
    /// Starts the AOF as the server does, has every writer append its records one at a time and
    /// wait for each to be acknowledged, checking at that moment that the bytes are in the file
    /// (and under always, that an fsync ran since the append). Stops the AOF before returning.
    /// </summary>
    private RunOutcome Run(string policy)
    {
        var config = new ServerConfig();
        Assert.Null(config.Set("dir", _dir, atStartup: true));
        Assert.Null(config.Set("appendonly", "yes", atStartup: true));
        Assert.Null(config.Set("appendfsync", policy, atStartup: true));
        var errors = new string?[Writers];
        string incrPath;
        var started = System.Diagnostics.Stopwatch.StartNew();
        using (var server = new DataServer(config))
        {
            var aof = server.Aof;
            aof.Start();
            Assert.True(aof.Enabled);
            incrPath = Assert.Single(Directory.GetFiles(AppendDirectory, "*" + AofManifest.IncrSuffix + ".aof"));
            var threads = new Thread[Writers];
            using var go = new ManualResetEventSlim();
            for (int w = 0; w < Writers; w++)
            {
                int writer = w;
                threads[w] = new Thread(() => errors[writer] = WriteRecords(aof, writer, policy == "always", incrPath, go)) { IsBackground = true };
                threads[w].Start();
            }
            go.Set();
            foreach (var thread in threads)
                Assert.True(thread.Join(Guard), "a writer never got its records acknowledged");
        }
        return new RunOutcome(incrPath, errors, started.Elapsed);
    }

    private static string? WriteRecords(AppendOnlyFile aof, int writer, bool always, string incrPath, ManualResetEventSlim go)
    {
        using var records = new AofRecordBuffer();
        go.Wait();
        for (int i = 0; i < RecordsPerWriter; i++)
        {
            records.Clear();
            records.BeginCommand(Database(writer), 3);
            records.Argument("SET"u8);
            records.Argument(Encoding.ASCII.GetBytes(Key(writer, i)));
            records.Argument(Encoding.ASCII.GetBytes(Value(writer, i)));
            records.EndCommand();
            long fsyncsAtAppend = always ? Fsyncs() : 0;
            long offset = aof.Append(records);
            // The connection's flush: write the group yourself unless someone else is (or must).
            while (true)
            {
                var advanced = aof.DurabilityAdvanced;
                if (aof.WriteError is { } error)
                    return $"the disk failed: {error}";
                if (aof.AcknowledgedOffset >= offset)
                    break;
                if (aof.TryWriteNow())
                    continue;
                if (!advanced.Wait(Guard))
                    return $"writer {writer} record {i}: not acknowledged within {Guard}";
            }
            // The AOF opened on an empty incremental file, so logical offsets are file positions.
            long length = new FileInfo(incrPath).Length;
            if (length < offset)
                return $"writer {writer} record {i} acknowledged at offset {offset} with the file {length} bytes long";
            if (always && Fsyncs() <= fsyncsAtAppend)
                return $"writer {writer} record {i} acknowledged under always with no fsync since it was appended";
        }
        return null;
    }

    /// <summary>
    /// Reads the file back with the server's own parser: one SELECT before each change of
    /// database, every record once, under its writer's database, each writer's in its order.
    /// </summary>
    private static void AssertFileHoldsEveryRecordInOrder(string incrPath)
    {
        var bytes = new ReadOnlySequence<byte>(File.ReadAllBytes(incrPath));
        var reader = new SequenceReader<byte>(bytes);
        using var batch = new RequestBatch();
        var next = new int[Writers];
        int database = -1;
        int selects = 0;
        while (!reader.End)
        {
            batch.Clear();
            var status = RespRequestParser.TryParse(ref reader, batch, new ProtocolLimits(), authenticated: true, out string? error);
            Assert.True(status == ParseStatus.Parsed, $"the file does not parse at byte {reader.Consumed}: {status} {error}");
            var args = batch[0];
            string name = Encoding.ASCII.GetString(args[0]);
            if (name == "SELECT")
            {
                int selected = int.Parse(Encoding.ASCII.GetString(args[1]));
                Assert.NotEqual(database, selected); // a SELECT only where the database changes
                database = selected;
                selects++;
                continue;
            }
            Assert.Equal("SET", name);
            string key = Encoding.ASCII.GetString(args[1]);
            var parts = key.Split(':');
            int writer = int.Parse(parts[1]), index = int.Parse(parts[2]);
            Assert.Equal(next[writer], index);
            Assert.Equal(Database(writer), database);
            Assert.Equal(Value(writer, index), Encoding.ASCII.GetString(args[2]));
            next[writer]++;
        }
        Assert.All(next, count => Assert.Equal(RecordsPerWriter, count));
        Assert.True(selects >= 1);
    }

    private static int Database(int writer) => writer % 3;
    private static string Key(int writer, int index) => $"key:{writer}:{index}";
    private static string Value(int writer, int index) => $"value-{writer}-{index}";

    private static long Fsyncs() => DiskIo.Totals()[DiskIoPurpose.AofFsync].Count;
}
