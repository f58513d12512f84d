using System.Globalization;
using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using Diagnostics.Contracts;
using Diagnostics.Monitor.Aggregation;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Kernel;
using Microsoft.Diagnostics.Tracing.Session;

namespace Diagnostics.Monitor.Windows;

/// <summary>
/// The server's file and disk I/O as the Windows kernel logs it: a real-time ETW session of our
/// own with the kernel provider (FileIO starts and ends, file names, DiskIO requests, threads
/// and processes), read on a thread of its own through TraceEvent, each event turned into a
/// neutral record for <see cref="EtwIoMatcher"/>, which pairs them and keeps the server's.
/// The kernel provider cannot be filtered by process: the session sees the whole machine, and
/// the server's events are picked by process id, and by its threads for events logged elsewhere.
/// </summary>
public sealed class EtwKernelSource(int serverPid, ILogger? logger = null) : IKernelIoSource
{
    private const KernelTraceEventParser.Keywords SessionKeywords =
        KernelTraceEventParser.Keywords.FileIO | KernelTraceEventParser.Keywords.FileIOInit
        | KernelTraceEventParser.Keywords.DiskIO | KernelTraceEventParser.Keywords.DiskIOInit
        | KernelTraceEventParser.Keywords.DiskFileIO
        | KernelTraceEventParser.Keywords.Thread | KernelTraceEventParser.Keywords.Process;

    /// <summary>The matcher's clock: 100 ns ticks since the session started.</summary>
    private const long TicksPerSecond = 10_000_000;

    // A session name of our own rather than "NT Kernel Logger" (Windows 8 and later run the kernel
    // provider in any session): starting ours never stops another tool's kernel trace, and a
    // session orphaned by a crash of this monitor is restarted by the next one for the same pid.
    private readonly string _sessionName = "Diagnostics.Monitor-etw-kernel-" + serverPid.ToString(CultureInfo.InvariantCulture);
    private TraceEventSession? _session;
    private Thread? _processing;
    private EtwIoMatcher? _matcher;
    private volatile string _state = "starting";
    private volatile bool _stopping;
    private long _eventsAtLastReport;
    private long _lostAtSource;

    public string Name => "etw-kernel";
    public IoAggregator Aggregator { get; } = new(EtwIoMatcher.CallNames);

    public void Start()
    {
        if (!OperatingSystem.IsWindows())
        {
            _state = "failed: ETW exists on Windows only";
            throw new PlatformNotSupportedException("The ETW kernel source runs on Windows only; on Linux the tracefs sources trace the kernel.");
        }
        StartSession();
    }

    public MonitorSourceStatus Report(TimeSpan interval)
    {
        long total = _matcher?.Records ?? 0;
        double rate = (total - _eventsAtLastReport) / Math.Max(interval.TotalSeconds, 0.001);
        _eventsAtLastReport = total;
        if (OperatingSystem.IsWindows())
            RefreshLostAtSource();
        return new MonitorSourceStatus
        {
            Name = Name,
            State = _state,
            Detail = _session is null ? "" : $"ETW session {_sessionName} (FileIO, FileIOInit, DiskIO, DiskIOInit, DiskFileIO, Thread, Process), pid {serverPid}",
            EventsPerSecond = rate,
            TotalEvents = total,
            DroppedAtSource = Interlocked.Read(ref _lostAtSource),
            DroppedInMonitor = (_matcher?.Dropped ?? 0) + Aggregator.Targets.Overflowed,
        };
    }

    public void Dispose()
    {
        _stopping = true;
        // Disposing a real-time session stops it in the kernel and makes Process() return.
        if (OperatingSystem.IsWindows())
            _session?.Dispose();
        if (_processing is { } thread && thread != Thread.CurrentThread)
            thread.Join(TimeSpan.FromSeconds(5));
        _state = "stopped";
    }

    [SupportedOSPlatform("windows")]
    private void StartSession()
    {
        try
        {
            if (TraceEventSession.IsElevated() == false)
                throw new UnauthorizedAccessException("an ETW kernel session needs Administrator rights");
            var session = new TraceEventSession(_sessionName, TraceEventSessionOptions.Create) { StopOnDispose = true };
            _session = session;
            session.EnableKernelProvider(SessionKeywords);
            // Timestamps go to the matcher as 100 ns ticks since the session's start: the session's
            // clock is QPC, which TraceEvent turns into TimeStampRelativeMSec against SessionStartTime.
            long unixMicrosAtTickZero = (session.Source.SessionStartTime.ToUniversalTime() - DateTime.UnixEpoch).Ticks / 10;
            var matcher = new EtwIoMatcher(serverPid, Aggregator, TicksPerSecond, unixMicrosAtTickZero);
            // Only thread-to-process tracking: TraceEvent's file-name tracking would keep a name
            // for every file on the machine (the matcher keeps its own, bounded), and disk service
            // time tracking keeps every disk event for as long as the session runs.
            var kernel = new KernelTraceEventParser(session.Source, KernelTraceEventParser.ParserTrackingOptions.ThreadToProcess);
            Subscribe(kernel, matcher);
            _matcher = matcher;
            var source = session.Source;
            _processing = new Thread(() => ProcessEvents(source)) { IsBackground = true, Name = "etw-kernel" };
            _processing.Start();
            _state = "running";
        }
        catch (Exception ex)
        {
            // Whatever Windows refused (rights, too many system loggers, a bad keyword), say it and leave nothing behind.
            _state = "failed: " + ex.Message;
            _session?.Dispose();
            _session = null;
            throw;
        }
    }

    [SupportedOSPlatform("windows")]
    private void Subscribe(KernelTraceEventParser kernel, EtwIoMatcher matcher)
    {
        kernel.ThreadStartGroup += data => matcher.OnThreadStart(data.ProcessID, data.ThreadID);
        kernel.ThreadEndGroup += data => matcher.OnThreadStop(data.ProcessID, data.ThreadID);

        kernel.FileIOCreate += data =>
        {
            int pid = data.ProcessID, tid = data.ThreadID;
            // The path is a string read out of the payload: only for the server's own Creates.
            string? path = matcher.IsServerContext(pid, tid) ? data.FileName : null;
            matcher.OnFileIoStart(new EtwFileIoInit(EtwFileIoKind.Create, data.IrpPtr, data.FileObject, 0, pid, tid, Ticks(data), Path: path));
        };
        kernel.FileIORead += data => matcher.OnFileIoStart(ReadWrite(EtwFileIoKind.Read, data));
        kernel.FileIOWrite += data => matcher.OnFileIoStart(ReadWrite(EtwFileIoKind.Write, data));
        kernel.FileIOFlush += data => matcher.OnFileIoStart(SimpleOp(EtwFileIoKind.Flush, data));
        kernel.FileIOCleanup += data => matcher.OnFileIoStart(SimpleOp(EtwFileIoKind.Cleanup, data));
        kernel.FileIOClose += data => matcher.OnFileIoStart(SimpleOp(EtwFileIoKind.Close, data));
        // Operations without a row still end with an OperationEnd: paired, so that their ends are no losses.
        Action<FileIOInfoTraceData> info = data => matcher.OnFileIoStart(
            new EtwFileIoInit(EtwFileIoKind.Other, data.IrpPtr, data.FileObject, data.FileKey, data.ProcessID, data.ThreadID, Ticks(data)));
        kernel.FileIOSetInfo += info;
        kernel.FileIOQueryInfo += info;
        kernel.FileIOFSControl += info;
        kernel.FileIODelete += info;
        kernel.FileIORename += info;
        Action<FileIODirEnumTraceData> directory = data => matcher.OnFileIoStart(
            new EtwFileIoInit(EtwFileIoKind.Other, data.IrpPtr, data.FileObject, data.FileKey, data.ProcessID, data.ThreadID, Ticks(data)));
        kernel.FileIODirEnum += directory;
        kernel.FileIODirNotify += directory;
        kernel.FileIOOperationEnd += data => matcher.OnFileIoEnd(
            new EtwFileIoEnd(data.IrpPtr, data.NtStatus, data.ExtraInfo, data.ProcessID, data.ThreadID, Ticks(data)));

        kernel.FileIOName += data => matcher.OnFileName(new EtwFileName(EtwFileNameKind.Name, data.FileKey, data.FileName));
        kernel.FileIOFileCreate += data => matcher.OnFileName(new EtwFileName(EtwFileNameKind.Create, data.FileKey, data.FileName));
        kernel.FileIOFileRundown += data => matcher.OnFileName(new EtwFileName(EtwFileNameKind.Rundown, data.FileKey, data.FileName));
        kernel.FileIOFileDelete += data => matcher.OnFileName(new EtwFileName(EtwFileNameKind.Delete, data.FileKey, null));

        kernel.DiskIOReadInit += data => matcher.OnDiskIoStart(DiskInit(EtwDiskIoKind.Read, data));
        kernel.DiskIOWriteInit += data => matcher.OnDiskIoStart(DiskInit(EtwDiskIoKind.Write, data));
        kernel.DiskIOFlushInit += data => matcher.OnDiskIoStart(DiskInit(EtwDiskIoKind.Flush, data));
        kernel.DiskIORead += data => matcher.OnDiskIoCompletion(DiskTransfer(EtwDiskIoKind.Read, data));
        kernel.DiskIOWrite += data => matcher.OnDiskIoCompletion(DiskTransfer(EtwDiskIoKind.Write, data));
        kernel.DiskIOFlushBuffers += data => matcher.OnDiskIoCompletion(new EtwDiskIoCompletion(EtwDiskIoKind.Flush, data.Irp, data.DiskNumber, 0,
            ElapsedNanos(data.ElapsedTimeMSec), 0, PayloadInt32(data, 16 + data.PointerSize), Ticks(data)));
    }

    private static EtwFileIoInit ReadWrite(EtwFileIoKind kind, FileIOReadWriteTraceData data) =>
        new(kind, data.IrpPtr, data.FileObject, data.FileKey, data.ProcessID, data.ThreadID, Ticks(data), data.Offset, data.IoSize);

    private static EtwFileIoInit SimpleOp(EtwFileIoKind kind, FileIOSimpleOpTraceData data) =>
        new(kind, data.IrpPtr, data.FileObject, data.FileKey, data.ProcessID, data.ThreadID, Ticks(data));

    /// <summary>
    /// Init events are logged in the issuing thread; IssuingThreadId follows the IRP in the payload
    /// (version 3, Windows 8 and later). TraceEvent copies it into ThreadID only when the header
    /// has none, so it is read from the payload first.
    /// </summary>
    private static EtwDiskIoInit DiskInit(EtwDiskIoKind kind, DiskIOInitTraceData data)
    {
        int issuer = PayloadInt32(data, data.PointerSize);
        return new(kind, data.Irp, data.ProcessID, issuer > 0 ? issuer : data.ThreadID, Ticks(data));
    }

    /// <summary>
    /// DiskIo_TypeGroup1: DiskNumber, IrpFlags, TransferSize, Reserved (4 bytes each), ByteOffset
    /// (8), FileObject and Irp (pointers), HighResResponseTime (8), then IssuingThreadId, which
    /// TraceEvent does not expose. Completions are logged in any context (often a DPC), so the
    /// header's thread is not the issuer.
    /// </summary>
    private static EtwDiskIoCompletion DiskTransfer(EtwDiskIoKind kind, DiskIOTraceData data) =>
        new(kind, data.Irp, data.DiskNumber, data.TransferSize, ElapsedNanos(data.ElapsedTimeMSec), data.FileKey,
            PayloadInt32(data, 32 + 2 * data.PointerSize), Ticks(data));

    private static long Ticks(TraceEvent data) => (long)(data.TimeStampRelativeMSec * (TicksPerSecond / 1000));

    private static long ElapsedNanos(double milliseconds) => (long)(milliseconds * 1_000_000);

    /// <summary>A 32-bit field of the payload at <paramref name="offset"/>, or -1 when this version of the event is too short to have it.</summary>
    private static int PayloadInt32(TraceEvent data, int offset) =>
        offset + sizeof(int) <= data.EventDataLength ? Marshal.ReadInt32(data.DataStart, offset) : -1;

    [SupportedOSPlatform("windows")]
    private void RefreshLostAtSource()
    {
        if (_session is not { } session || _stopping)
            return;
        try
        {
            Interlocked.Exchange(ref _lostAtSource, session.EventsLost);
        }
        catch (Exception ex) when (ex is COMException or InvalidOperationException or ObjectDisposedException or UnauthorizedAccessException)
        {
            // The session is gone (stopped by another tool, or being disposed): keep the last count.
        }
    }

    private void ProcessEvents(TraceEventDispatcher source)
    {
        try
        {
            source.Process();
            if (!_stopping)
                _state = "failed: the ETW session stopped (was it stopped from outside, e.g. logman stop?)";
        }
        catch (Exception ex) when (!_stopping)
        {
            _state = "failed: " + ex.Message;
            logger?.LogError(ex, "The ETW kernel session of pid {Pid} failed", serverPid);
        }
        catch (Exception) when (_stopping)
        {
            // Disposing the session under a running Process() may surface as an error: it is the stop.
        }
    }
}
