using Diagnostics.Contracts;
using Diagnostics.Monitor.Aggregation;
using Diagnostics.Monitor.Windows;

namespace Diagnostics.Server.Tests.Monitor;

/// <summary>
/// The Windows kernel source's pairing logic, fed sequences of FileIO, DiskIO and thread events
/// as a real-time kernel session delivers them (field values as TraceEvent shows them: kernel
/// IRP and file object addresses, TTIDs, NTSTATUS codes, 100 ns timestamps since the session's
/// start), checked against the aggregator's sums.
/// </summary>
public sealed class EtwIoMatcherTests
{
    private const int ServerPid = 6204;
    private const int ServerThread = 7412;
    private const int SecondServerThread = 9016;
    private const int OtherPid = 3388;
    private const int OtherThread = 5120;
    private const int SystemPid = 4;
    private const int LazyWriterThread = 184;

    private const long TicksPerSecond = 10_000_000;
    private const long TicksPerMicro = 10;
    private const long UnixMicrosAtSessionStart = 1_764_000_000_000_000;

    /// <summary>The first record of every recording: the in-flight grace of one second starts here.</summary>
    private const long Attached = 1 * TicksPerSecond;
    /// <summary>Where the recordings' own operations start: past the grace, so losses count.</summary>
    private const long T0 = 3 * TicksPerSecond;

    private const string AofPath = @"C:\ProgramData\Diagnostics.Server\appendonlydir\appendonly.aof.1.incr.aof";
    private const string ManifestPath = @"C:\ProgramData\Diagnostics.Server\appendonlydir\appendonly.aof.manifest";
    private const ulong AofFileObject = 0xffffc10f2e6d4a70;
    private const ulong AofFileKey = 0xffff8a0c5d2e3170;
    private const ulong ManifestFileObject = 0xffffc10f2f1a8c30;
    private const ulong ManifestFileKey = 0xffff8a0c61b04d50;
    private const ulong OtherFileObject = 0xffffc10f31c25e10;
    private const ulong OtherFileKey = 0xffff8a0c64a7e9b0;

    private const int StatusSuccess = 0;
    private const int StatusDiskFull = unchecked((int)0xC000007F);
    private const int StatusObjectNameNotFound = unchecked((int)0xC0000034);
    private const ulong FileCreated = 2;

    [Fact]
    public void CreateWriteFlushAndCloseOfOneFileGiveOpenWriteFsyncAndCloseRowsWithExactBytesAndDurations()
    {
        var (matcher, aggregator) = NewMatcher();
        long recordsBefore = matcher.Records;
        Replay(matcher,
            new EtwFileIoInit(EtwFileIoKind.Create, 0xffffc10f2a3b1c88, AofFileObject, 0, ServerPid, ServerThread, T0, Path: AofPath),
            new EtwFileIoEnd(0xffffc10f2a3b1c88, StatusSuccess, FileCreated, ServerPid, ServerThread, T0 + 52 * TicksPerMicro),
            new EtwFileIoInit(EtwFileIoKind.Write, 0xffffc10f2a3b1d98, AofFileObject, AofFileKey, ServerPid, ServerThread, T0 + 1_000, 0, 4096),
            new EtwFileIoEnd(0xffffc10f2a3b1d98, StatusSuccess, 4096, ServerPid, ServerThread, T0 + 1_000 + 18 * TicksPerMicro),
            new EtwFileIoInit(EtwFileIoKind.Flush, 0xffffc10f2b07e4a8, AofFileObject, AofFileKey, ServerPid, ServerThread, T0 + 2_000),
            new EtwFileIoEnd(0xffffc10f2b07e4a8, StatusSuccess, 0, ServerPid, ServerThread, T0 + 2_000 + 4_500 * TicksPerMicro),
            new EtwFileIoInit(EtwFileIoKind.Cleanup, 0xffffc10f2a3b1c88, AofFileObject, AofFileKey, ServerPid, ServerThread, T0 + 50_000),
            new EtwFileIoEnd(0xffffc10f2a3b1c88, StatusSuccess, 0, ServerPid, ServerThread, T0 + 50_000 + 3 * TicksPerMicro),
            new EtwFileIoInit(EtwFileIoKind.Close, 0xffffc10f2a3b1d98, AofFileObject, AofFileKey, ServerPid, ServerThread, T0 + 50_100),
            new EtwFileIoEnd(0xffffc10f2a3b1d98, StatusSuccess, 0, ServerPid, ServerThread, T0 + 50_100 + 2 * TicksPerMicro));

        var (sums, sample) = aggregator.Cut();

        Assert.Equal(4, sums.Count);
        var open = Row(sums, ServerThread, AofPath, "open");
        Assert.Equal(("file", "FileIo/Create", 1L, 0L, 0L, 52L), (open.TargetKind, open.Calls, open.Count, open.Bytes, open.Errors, open.Micros));
        var write = Row(sums, ServerThread, AofPath, "write");
        Assert.Equal(("FileIo/Write", 1L, 4096L, 0L, 18L), (write.Calls, write.Count, write.Bytes, write.Errors, write.Micros));
        Assert.Equal(1, write.LatencyBuckets[MicrosecondBuckets.IndexOf(18)]);
        var fsync = Row(sums, ServerThread, AofPath, "fsync");
        Assert.Equal(("FileIo/Flush", 1L, 0L, 4500L), (fsync.Calls, fsync.Count, fsync.Bytes, fsync.Micros));
        // One handle closed is an IRP_MJ_CLEANUP then an IRP_MJ_CLOSE: both in the close row, told apart by their calls.
        var close = Row(sums, ServerThread, AofPath, "close");
        Assert.Equal(("FileIo/Cleanup,FileIo/Close", 2L, 0L, 5L), (close.Calls, close.Count, close.Bytes, close.Micros));

        Assert.Equal(5, sample.Count);
        Assert.Equal(new KernelIoEvent(UnixMicrosAtSessionStart + T0 / TicksPerMicro, ServerThread, "FileIo/Create", AofPath, 0, 52_000), sample[0]);
        Assert.Equal(new KernelIoEvent(UnixMicrosAtSessionStart + (T0 + 1_000) / TicksPerMicro, ServerThread, "FileIo/Write", AofPath, 4096, 18_000), sample[1]);
        Assert.Equal(0, matcher.Dropped);
        Assert.Equal(0, matcher.PendingOperations);
        Assert.Equal(10, matcher.Records - recordsBefore);
    }

    [Fact]
    public void TwoThreadsInterleavedArePairedByIrpWhetherTheEndArrivesAfterOrBeforeItsStart()
    {
        var (matcher, aggregator) = NewMatcher();
        Replay(matcher,
            new ThreadRundown(ServerPid, ServerThread),
            new ThreadRundown(ServerPid, SecondServerThread),
            new EtwFileName(EtwFileNameKind.Rundown, AofFileKey, AofPath),
            new EtwFileName(EtwFileNameKind.Rundown, ManifestFileKey, ManifestPath),
            new EtwFileIoInit(EtwFileIoKind.Write, 0xffffc10f2a3b1c88, AofFileObject, AofFileKey, ServerPid, ServerThread, T0, 1_048_576, 8192),
            new EtwFileIoInit(EtwFileIoKind.Read, 0xffffc10f2c4410b8, ManifestFileObject, ManifestFileKey, ServerPid, SecondServerThread, T0 + 50, 0, 512),
            // The second thread's read ends while the first thread's write is still in the file system.
            new EtwFileIoEnd(0xffffc10f2c4410b8, StatusSuccess, 88, ServerPid, SecondServerThread, T0 + 50 + 20 * TicksPerMicro),
            // Another CPU's buffer delivered first: the end of the second thread's write before its start.
            new EtwFileIoEnd(0xffffc10f2d9e7f28, StatusSuccess, 100, ServerPid, SecondServerThread, T0 + 400),
            new EtwFileIoInit(EtwFileIoKind.Write, 0xffffc10f2d9e7f28, ManifestFileObject, ManifestFileKey, ServerPid, SecondServerThread, T0 + 300, 0, 100),
            // The first write completes in the System process's context: the IRP still ties it to its start.
            new EtwFileIoEnd(0xffffc10f2a3b1c88, StatusSuccess, 8192, SystemPid, -1, T0 + 120 * TicksPerMicro));

        var (sums, _) = aggregator.Cut();

        Assert.Equal(3, sums.Count);
        var firstWrite = Row(sums, ServerThread, AofPath, "write");
        Assert.Equal((1L, 8192L, 120L), (firstWrite.Count, firstWrite.Bytes, firstWrite.Micros));
        var read = Row(sums, SecondServerThread, ManifestPath, "read");
        Assert.Equal((1L, 88L, 20L), (read.Count, read.Bytes, read.Micros));
        var secondWrite = Row(sums, SecondServerThread, ManifestPath, "write");
        Assert.Equal((1L, 100L, 10L), (secondWrite.Count, secondWrite.Bytes, secondWrite.Micros));
        matcher.ExpireWaitingEnds();
        Assert.Equal(0, matcher.Dropped);
        Assert.Equal(0, matcher.PendingOperations);
    }

    [Fact]
    public void AnEndThatNoStartClaimsIsCountedAsADropOnceItsReorderWindowHasPassed()
    {
        var (matcher, aggregator) = NewMatcher();
        Replay(matcher,
            new EtwFileIoEnd(0xffffc10f2a3b1c88, StatusSuccess, 4096, ServerPid, ServerThread, T0));

        // It may yet be an end delivered ahead of its start: it waits, not yet a loss.
        Assert.Equal(0, matcher.Dropped);

        // Time moves on past the two-second reorder window (any record moves it): no start came.
        Replay(matcher,
            new EtwFileIoInit(EtwFileIoKind.Read, 0xffffc10f30b2a6c8, OtherFileObject, OtherFileKey, OtherPid, OtherThread, T0 + 3 * TicksPerSecond, 0, 4096));

        Assert.Equal(1, matcher.UnmatchedEnds);
        Assert.Equal(1, matcher.Dropped);
        Assert.Empty(aggregator.Cut().Sums);
    }

    [Fact]
    public void EndsOfOperationsInFlightWhenTracingBeganAreNotLosses()
    {
        var (matcher, aggregator) = NewMatcher(firstRecordAt: T0);
        Replay(matcher,
            new EtwFileIoEnd(0xffffc10f2a3b1c88, StatusSuccess, 4096, ServerPid, ServerThread, T0 + 200 * TicksPerMicro),
            new EtwFileIoEnd(0xffffc10f2a3b1d98, StatusSuccess, 0, ServerPid, SecondServerThread, T0 + TicksPerSecond / 2));
        matcher.ExpireWaitingEnds();

        Assert.Equal(0, matcher.Dropped);
        Assert.Empty(aggregator.Cut().Sums);

        // The same thing once the first second of tracing is over is a loss.
        Replay(matcher, new EtwFileIoEnd(0xffffc10f2b07e4a8, StatusSuccess, 0, ServerPid, ServerThread, T0 + 2 * TicksPerSecond));
        matcher.ExpireWaitingEnds();
        Assert.Equal(1, matcher.Dropped);
    }

    [Fact]
    public void AnotherProcessesEventsAreIgnoredButStillCountedAsRecords()
    {
        var (matcher, aggregator) = NewMatcher();
        long recordsBefore = matcher.Records;
        Replay(matcher,
            new ThreadRundown(OtherPid, OtherThread),
            new EtwFileName(EtwFileNameKind.Create, OtherFileKey, @"C:\Users\svc\AppData\Local\Temp\other.tmp"),
            new EtwFileIoInit(EtwFileIoKind.Create, 0xffffc10f30b2a6c8, OtherFileObject, 0, OtherPid, OtherThread, T0),
            new EtwFileIoEnd(0xffffc10f30b2a6c8, StatusSuccess, FileCreated, OtherPid, OtherThread, T0 + 400),
            new EtwFileIoInit(EtwFileIoKind.Write, 0xffffc10f30b2a6c8, OtherFileObject, OtherFileKey, OtherPid, OtherThread, T0 + 1_000, 0, 65536),
            new EtwFileIoEnd(0xffffc10f30b2a6c8, StatusSuccess, 65536, OtherPid, OtherThread, T0 + 1_500),
            // An end of the other process whose start is not in the recording: theirs, not a loss of ours.
            new EtwFileIoEnd(0xffffc10f31d7f2e8, StatusSuccess, 512, OtherPid, OtherThread, T0 + 1_600),
            new EtwDiskIoInit(EtwDiskIoKind.Write, 0xffffc10f33a41b48, OtherPid, OtherThread, T0 + 2_000),
            new EtwDiskIoCompletion(EtwDiskIoKind.Write, 0xffffc10f33a41b48, 0, 65536, 640_000, OtherFileKey, OtherThread, T0 + 8_400));
        matcher.ExpireWaitingEnds();

        Assert.Empty(aggregator.Cut().Sums);
        Assert.Equal(0, matcher.Dropped);
        Assert.Equal(0, matcher.PendingOperations);
        Assert.Equal(9, matcher.Records - recordsBefore);
    }

    [Fact]
    public void AFailedWriteCountsAsAnErrorWithNoBytesAndItsNtStatusAsTheResult()
    {
        var (matcher, aggregator) = NewMatcher();
        Replay(matcher,
            new EtwFileIoInit(EtwFileIoKind.Create, 0xffffc10f2a3b1c88, ManifestFileObject, 0, ServerPid, ServerThread, T0, Path: ManifestPath),
            new EtwFileIoEnd(0xffffc10f2a3b1c88, StatusObjectNameNotFound, 0, ServerPid, ServerThread, T0 + 31 * TicksPerMicro),
            new EtwFileIoInit(EtwFileIoKind.Create, 0xffffc10f2a3b1d98, AofFileObject, 0, ServerPid, ServerThread, T0 + 1_000, Path: AofPath),
            new EtwFileIoEnd(0xffffc10f2a3b1d98, StatusSuccess, FileCreated, ServerPid, ServerThread, T0 + 1_500),
            new EtwFileIoInit(EtwFileIoKind.Write, 0xffffc10f2b07e4a8, AofFileObject, AofFileKey, ServerPid, ServerThread, T0 + 2_000, 7_340_032, 4096),
            new EtwFileIoEnd(0xffffc10f2b07e4a8, StatusDiskFull, 0, ServerPid, ServerThread, T0 + 2_000 + 95 * TicksPerMicro),
            new EtwFileIoInit(EtwFileIoKind.Write, 0xffffc10f2b07e4a8, AofFileObject, AofFileKey, ServerPid, ServerThread, T0 + 5_000, 7_340_032, 1024),
            new EtwFileIoEnd(0xffffc10f2b07e4a8, StatusSuccess, 1024, ServerPid, ServerThread, T0 + 5_000 + 12 * TicksPerMicro));

        var (sums, sample) = aggregator.Cut();

        var write = Row(sums, ServerThread, AofPath, "write");
        Assert.Equal((2L, 1024L, 1L, 107L), (write.Count, write.Bytes, write.Errors, write.Micros));
        var failedOpen = Row(sums, ServerThread, ManifestPath, "open");
        Assert.Equal((1L, 1L), (failedOpen.Count, failedOpen.Errors));
        Assert.Equal(0, Row(sums, ServerThread, AofPath, "open").Errors);
        var diskFull = Assert.Single(sample, e => e.Call == "FileIo/Write" && e.Result < 0);
        Assert.Equal(-1_073_741_697L, diskFull.Result);
        Assert.Equal(95_000, diskFull.DurationNanos);
        Assert.Equal(0, matcher.Dropped);
    }

    [Fact]
    public void DiskRequestsAreTheIssuingServerThreadsOrThreadZerosForWritebackOfTheServersFiles()
    {
        var (matcher, aggregator) = NewMatcher();
        Replay(matcher,
            new ThreadRundown(ServerPid, ServerThread),
            new ThreadRundown(SystemPid, LazyWriterThread),
            new EtwFileName(EtwFileNameKind.Rundown, AofFileKey, AofPath),
            // A cached write by the server makes the AOF's file key the server's.
            new EtwFileIoInit(EtwFileIoKind.Write, 0xffffc10f2a3b1c88, AofFileObject, AofFileKey, ServerPid, ServerThread, T0, 0, 4096),
            new EtwFileIoEnd(0xffffc10f2a3b1c88, StatusSuccess, 4096, ServerPid, ServerThread, T0 + 80),
            // Write-through by the server thread: completed in a DPC, naming its issuer.
            new EtwDiskIoCompletion(EtwDiskIoKind.Write, 0xffffc10f34e01a08, 1, 4096, 812_000, AofFileKey, ServerThread, T0 + 20_000),
            // The lazy writer (System) flushes the AOF's dirty pages later: the server's file, nobody's thread.
            new EtwDiskIoInit(EtwDiskIoKind.Write, 0xffffc10f34e01b18, SystemPid, LazyWriterThread, T0 + 30_000),
            new EtwDiskIoCompletion(EtwDiskIoKind.Write, 0xffffc10f34e01b18, 1, 65536, 2_500_000, AofFileKey, LazyWriterThread, T0 + 55_000),
            // Another process's read of its own file on the same disk: not the server's.
            new EtwDiskIoCompletion(EtwDiskIoKind.Read, 0xffffc10f34e01c28, 1, 16384, 300_000, OtherFileKey, OtherThread, T0 + 60_000),
            // FlushFileBuffers reaching the disk as a cache flush, issued by the server thread.
            new EtwDiskIoInit(EtwDiskIoKind.Flush, 0xffffc10f34e01d38, ServerPid, ServerThread, T0 + 70_000),
            new EtwDiskIoCompletion(EtwDiskIoKind.Flush, 0xffffc10f34e01d38, 1, 0, 1_200_000, 0, ServerThread, T0 + 82_000));

        var (sums, sample) = aggregator.Cut();

        Assert.Equal(4, sums.Count);
        var issued = Row(sums, ServerThread, "disk 1", "disk_write");
        Assert.Equal(("device", "DiskIo/Write", 1L, 4096L, 812L), (issued.TargetKind, issued.Calls, issued.Count, issued.Bytes, issued.Micros));
        var writeback = Row(sums, 0, "disk 1", "disk_write");
        Assert.Equal((1L, 65536L, 2500L), (writeback.Count, writeback.Bytes, writeback.Micros));
        var flush = Row(sums, ServerThread, "disk 1", "disk_flush");
        Assert.Equal(("DiskIo/FlushBuffers", 1L, 0L, 1200L), (flush.Calls, flush.Count, flush.Bytes, flush.Micros));
        Assert.DoesNotContain(sums, row => row.Operation == "disk_read");
        // A request without a server init starts at its completion less its response time.
        var issuedEvent = Assert.Single(sample, e => e.Call == "DiskIo/Write" && e.ThreadId == ServerThread);
        Assert.Equal(UnixMicrosAtSessionStart + (T0 + 20_000) / TicksPerMicro - 812, issuedEvent.UnixMicros);
        matcher.ExpireWaitingEnds();
        Assert.Equal(0, matcher.Dropped);
    }

    [Fact]
    public void ADiskInitGivesTheIssuerAndStartWhenTheCompletionLacksThemAndAnInitAfterItsCompletionIsNoLoss()
    {
        var (matcher, aggregator) = NewMatcher();
        Replay(matcher,
            new ThreadRundown(ServerPid, ServerThread),
            // Version 2 completions (before Windows 8) have no IssuingThreadId.
            new EtwDiskIoInit(EtwDiskIoKind.Read, 0xffffc10f34e01a08, ServerPid, ServerThread, T0),
            new EtwDiskIoCompletion(EtwDiskIoKind.Read, 0xffffc10f34e01a08, 0, 8192, 0, AofFileKey, -1, T0 + 1_500),
            // The completion's buffer delivered before the init's: counted once, the late init is no lost start.
            new EtwDiskIoCompletion(EtwDiskIoKind.Write, 0xffffc10f34e01b18, 0, 4096, 400_000, AofFileKey, ServerThread, T0 + 10_000),
            new EtwDiskIoInit(EtwDiskIoKind.Write, 0xffffc10f34e01b18, ServerPid, ServerThread, T0 + 6_000),
            // Much later: the disk table is swept, nothing was left behind.
            new EtwDiskIoCompletion(EtwDiskIoKind.Read, 0xffffc10f34e01c28, 0, 512, 100_000, OtherFileKey, OtherThread, T0 + 200 * TicksPerSecond));

        var (sums, sample) = aggregator.Cut();

        var read = Row(sums, ServerThread, "disk 0", "disk_read");
        Assert.Equal((1L, 8192L, 150L), (read.Count, read.Bytes, read.Micros));
        Assert.Equal(UnixMicrosAtSessionStart + T0 / TicksPerMicro, Assert.Single(sample, e => e.Call == "DiskIo/Read").UnixMicros);
        var write = Row(sums, ServerThread, "disk 0", "disk_write");
        Assert.Equal((1L, 4096L, 400L), (write.Count, write.Bytes, write.Micros));
        Assert.Equal(0, matcher.LostStarts);
        Assert.Equal(0, matcher.Dropped);
    }

    [Fact]
    public void ThePendingTableIsBoundedAndWhatItEvictsIsCountedBothAsALostStartAndAsAnUnmatchedEnd()
    {
        const int capacity = 16;
        var (matcher, aggregator) = NewMatcher(pendingCapacity: capacity);
        const ulong firstIrp = 0xffffc10f2a3b0000;
        for (int i = 0; i <= capacity; i++)
            matcher.OnFileIoStart(new EtwFileIoInit(EtwFileIoKind.Write, firstIrp + (ulong)i * 0x110, AofFileObject, AofFileKey,
                ServerPid, ServerThread, T0 + i * 100, i * 4096L, 4096));

        // The seventeenth start found the table full: the oldest eighth (two) made room.
        Assert.Equal(2, matcher.LostStarts);
        Assert.Equal(capacity - 1, matcher.PendingOperations);

        for (int i = 0; i <= capacity; i++)
            matcher.OnFileIoEnd(new EtwFileIoEnd(firstIrp + (ulong)i * 0x110, StatusSuccess, 4096, ServerPid, ServerThread, T0 + 10_000 + i * 100));
        matcher.ExpireWaitingEnds();

        var write = Row(aggregator.Cut().Sums, ServerThread, "file object 0xffffc10f2e6d4a70", "write");
        Assert.Equal((capacity - 1L, (capacity - 1L) * 4096), (write.Count, write.Bytes));
        // The two evicted operations' ends found no start.
        Assert.Equal(2, matcher.UnmatchedEnds);
        Assert.Equal(4, matcher.Dropped);
        Assert.Equal(0, matcher.PendingOperations);
    }

    [Fact]
    public void AServerStartWhoseIrpAnotherProcessReusesLostItsEndAndTheOtherEndIsNotTheServers()
    {
        var (matcher, aggregator) = NewMatcher();
        Replay(matcher,
            new EtwFileIoInit(EtwFileIoKind.Read, 0xffffc10f2a3b1c88, AofFileObject, AofFileKey, ServerPid, ServerThread, T0, 0, 4096),
            // Its OperationEnd was lost in the kernel; the IRP address is freed and reused by another process.
            new EtwFileIoInit(EtwFileIoKind.Write, 0xffffc10f2a3b1c88, OtherFileObject, OtherFileKey, OtherPid, OtherThread, T0 + 9_000, 0, 512),
            new EtwFileIoEnd(0xffffc10f2a3b1c88, StatusSuccess, 512, OtherPid, OtherThread, T0 + 9_400));

        Assert.Empty(aggregator.Cut().Sums);
        Assert.Equal(1, matcher.LostStarts);
        Assert.Equal(1, matcher.Dropped);
    }

    [Fact]
    public void OperationsWithoutARowArePairedSilently()
    {
        var (matcher, aggregator) = NewMatcher();
        Replay(matcher,
            // QueryInfo (file size before a read) and SetInfo (truncate), as .NET issues them.
            new EtwFileIoInit(EtwFileIoKind.Other, 0xffffc10f2a3b1c88, AofFileObject, AofFileKey, ServerPid, ServerThread, T0),
            new EtwFileIoEnd(0xffffc10f2a3b1c88, StatusSuccess, 0, ServerPid, ServerThread, T0 + 90),
            new EtwFileIoEnd(0xffffc10f2a3b1d98, StatusSuccess, 0, ServerPid, ServerThread, T0 + 300),
            new EtwFileIoInit(EtwFileIoKind.Other, 0xffffc10f2a3b1d98, AofFileObject, AofFileKey, ServerPid, ServerThread, T0 + 200));
        matcher.ExpireWaitingEnds();

        Assert.Empty(aggregator.Cut().Sums);
        Assert.Equal(0, matcher.Dropped);
        Assert.Equal(0, matcher.PendingOperations);
    }

    [Fact]
    public void FilesAreNamedByTheirCreateOrNameEventsAndAPlaceholderIsRenamedWhenTheNameComes()
    {
        var (matcher, aggregator) = NewMatcher();
        Replay(matcher,
            // The AOF was opened before the monitor attached: no Create, no name yet.
            new EtwFileIoInit(EtwFileIoKind.Write, 0xffffc10f2a3b1c88, AofFileObject, AofFileKey, ServerPid, ServerThread, T0, 0, 100),
            new EtwFileIoEnd(0xffffc10f2a3b1c88, StatusSuccess, 100, ServerPid, ServerThread, T0 + 50));

        var before = Assert.Single(aggregator.Cut().Sums);
        Assert.Equal(("file object 0xffffc10f2e6d4a70", "file"), (before.Target, before.TargetKind));

        Replay(matcher,
            new EtwFileName(EtwFileNameKind.Name, AofFileKey, AofPath),
            new EtwFileIoInit(EtwFileIoKind.Write, 0xffffc10f2a3b1c88, AofFileObject, AofFileKey, ServerPid, ServerThread, T0 + 1_000, 100, 200),
            new EtwFileIoEnd(0xffffc10f2a3b1c88, StatusSuccess, 200, ServerPid, ServerThread, T0 + 1_050),
            // A named pipe opened by the server is a pipe, not a file.
            new EtwFileIoInit(EtwFileIoKind.Create, 0xffffc10f2a3b1d98, 0xffffc10f35b87e20, 0, ServerPid, ServerThread, T0 + 2_000,
                Path: @"\Device\NamedPipe\dotnet-diagnostic-6204-2741395-socket"),
            new EtwFileIoEnd(0xffffc10f2a3b1d98, StatusSuccess, 1, ServerPid, ServerThread, T0 + 2_100));

        var after = aggregator.Cut().Sums;
        Assert.Equal(200, Row(after, ServerThread, AofPath, "write").Bytes);
        Assert.Equal("pipe", Row(after, ServerThread, @"\Device\NamedPipe\dotnet-diagnostic-6204-2741395-socket", "open").TargetKind);
    }

    private static (EtwIoMatcher Matcher, IoAggregator Aggregator) NewMatcher(int pendingCapacity = EtwIoMatcher.PendingKept, long firstRecordAt = Attached)
    {
        var aggregator = new IoAggregator(EtwIoMatcher.CallNames);
        var matcher = new EtwIoMatcher(ServerPid, aggregator, TicksPerSecond, UnixMicrosAtSessionStart, pendingCapacity);
        if (firstRecordAt == Attached)
        {
            // Something of another process arrives first, as it does on a busy machine: it starts the clock.
            matcher.OnFileIoStart(new EtwFileIoInit(EtwFileIoKind.Read, 0xffffc10f3f000008, OtherFileObject, OtherFileKey, OtherPid, OtherThread, Attached, 0, 4096));
        }
        return (matcher, aggregator);
    }

    /// <summary>Feeds a recorded sequence in delivery order, as the ETW source would.</summary>
    private static void Replay(EtwIoMatcher matcher, params object[] recording)
    {
        foreach (object record in recording)
        {
            switch (record)
            {
                case EtwFileIoInit start: matcher.OnFileIoStart(start); break;
                case EtwFileIoEnd end: matcher.OnFileIoEnd(end); break;
                case EtwFileName name: matcher.OnFileName(name); break;
                case EtwDiskIoInit diskStart: matcher.OnDiskIoStart(diskStart); break;
                case EtwDiskIoCompletion completion: matcher.OnDiskIoCompletion(completion); break;
                case ThreadRundown thread: matcher.OnThreadStart(thread.ProcessId, thread.ThreadId); break;
                default: throw new ArgumentException("not an ETW record: " + record.GetType().Name);
            }
        }
    }

    private static KernelIoAggregate Row(List<KernelIoAggregate> sums, int threadId, string target, string operation) =>
        Assert.Single(sums, row => row.ThreadId == threadId && row.Target == target && row.Operation == operation);

    /// <summary>Thread/DCStart: a thread alive when the session started.</summary>
    private sealed record ThreadRundown(int ProcessId, int ThreadId);
}
