using System.Runtime.InteropServices;

namespace Diagnostics.Monitor.Linux;

/// <summary>
/// Drains an instance's per-CPU binary ring buffers (trace_pipe_raw) on one thread and hands the
/// records on in timestamp order across CPUs. A non-blocking read returns a page with whatever is
/// committed; each turn reads up to <see cref="PagesPerTurn"/> pages from every CPU, stages their
/// records, sorts them by time and passes on those no unread record can precede: up to the
/// earliest last timestamp among CPUs that may hold more (a drained CPU's next records are newer
/// than anything read). The rest wait for the next turn. Order matters because a thread that
/// moves between CPUs inside a system call has its enter in one buffer and its exit in another.
/// When every CPU is empty the thread sleeps briefly; the kernel's buffers absorb the bursts.
/// </summary>
public sealed unsafe class TracefsBufferReader : IDisposable
{
    private readonly TracefsInstance _instance;
    private readonly RingBufferPage _layout;
    private readonly RingBufferPage.EventHandler _onEvent;
    private readonly Lock _gate;
    private readonly int[] _fds;
    private readonly int _pageSize;
    private readonly Thread _thread;
    private readonly RingBufferPage.EventHandler _stage;
    private volatile bool _stopping;
    private const int PagesPerTurn = 16;
    // Records read but not yet passed on: their bytes in one arena, their times and places in a list.
    private byte[] _arena = new byte[1 << 20];
    private byte[] _spare = new byte[1 << 20];
    private int _arenaUsed;
    private readonly List<StagedRecord> _staged = new(16_384);
    private long _sequence;
    private long _lastStagedTime;

    public TracefsBufferReader(TracefsInstance instance, RingBufferPage.EventHandler onEvent, Lock gate, string threadName)
    {
        _instance = instance;
        _onEvent = onEvent;
        _gate = gate;
        _layout = RingBufferPage.FromHeaderPage(File.ReadAllText(Path.Combine(instance.Root, "events", "header_page")));
        string subBuffer = Path.Combine(instance.Path, "buffer_subbuf_size_kb");
        _pageSize = File.Exists(subBuffer) ? int.Parse(File.ReadAllText(subBuffer).Trim(), System.Globalization.CultureInfo.InvariantCulture) * 1024 : Environment.SystemPageSize;
        var buffers = instance.CpuBuffers();
        _fds = new int[buffers.Count];
        for (int i = 0; i < buffers.Count; i++)
        {
            _fds[i] = Libc.open(buffers[i].Path, Libc.ReadOnly | Libc.NonBlocking | Libc.CloseOnExec);
            if (_fds[i] < 0)
                throw new IOException($"cannot open {buffers[i].Path}: {Libc.ErrorText(Marshal.GetLastPInvokeError())}");
        }
        _thread = new Thread(Run) { IsBackground = true, Name = threadName };
        _stage = Stage;
    }

    /// <summary>Events lost before they reached a page this reader got (the page's missed-events mark).</summary>
    public long MissedInPages { get; private set; }

    /// <summary>Pages read, and the last read error, for the source's status.</summary>
    public long Pages { get; private set; }
    public string? Failure { get; private set; }

    public void Start() => _thread.Start();

    private void Run()
    {
        var page = new byte[_pageSize];
        try
        {
            while (!_stopping)
            {
                bool any = false;
                long horizon = long.MaxValue;
                for (int cpu = 0; cpu < _fds.Length && !_stopping; cpu++)
                {
                    int pages = 0;
                    _lastStagedTime = long.MinValue;
                    while (pages < PagesPerTurn && ReadPage(_fds[cpu], page))
                        pages++;
                    any |= pages > 0;
                    // A CPU that gave a full turn may hold more, all later than what it gave.
                    if (pages == PagesPerTurn && _lastStagedTime != long.MinValue)
                        horizon = Math.Min(horizon, _lastStagedTime);
                }
                PassOn(horizon);
                if (!any)
                    Thread.Sleep(10);
            }
        }
        catch (Exception ex) when (ex is IOException or InvalidDataException or InvalidOperationException or ArgumentOutOfRangeException)
        {
            Failure = ex.Message;
        }
    }

    private bool ReadPage(int fd, byte[] page)
    {
        nint read;
        fixed (byte* buffer = page)
            read = Libc.read(fd, buffer, page.Length);
        if (read < 0)
        {
            int errno = Marshal.GetLastPInvokeError();
            if (errno is Libc.WouldBlock or Libc.Interrupted)
                return false;
            throw new IOException($"reading {_instance.Path} failed: {Libc.ErrorText(errno)}");
        }
        if (read == 0)
            return false;
        Pages++;
        long missed = _layout.Walk(page.AsSpan(0, (int)read), _stage);
        if (missed > 0)
            MissedInPages += missed;
        return true;
    }

    private void Stage(long timestamp, ReadOnlySpan<byte> record)
    {
        if (_arenaUsed + record.Length > _arena.Length)
            Array.Resize(ref _arena, Math.Max(_arena.Length * 2, _arenaUsed + record.Length));
        record.CopyTo(_arena.AsSpan(_arenaUsed));
        _staged.Add(new StagedRecord(timestamp, _sequence++, _arenaUsed, record.Length));
        _arenaUsed += record.Length;
        _lastStagedTime = timestamp;
    }

    /// <summary>Hands on, in time order, every staged record up to <paramref name="horizon"/>; keeps the rest.</summary>
    private void PassOn(long horizon)
    {
        if (_staged.Count == 0)
            return;
        _staged.Sort(static (a, b) => a.Timestamp != b.Timestamp ? a.Timestamp.CompareTo(b.Timestamp) : a.Sequence.CompareTo(b.Sequence));
        int passed = 0;
        lock (_gate)
        {
            for (; passed < _staged.Count && _staged[passed].Timestamp <= horizon; passed++)
            {
                var staged = _staged[passed];
                _onEvent(staged.Timestamp, _arena.AsSpan(staged.Offset, staged.Length));
            }
        }
        if (passed == _staged.Count)
        {
            _staged.Clear();
            _arenaUsed = 0;
            return;
        }
        // Move the records that wait to the front of a fresh arena, and of the list, in place.
        if (_spare.Length < _arena.Length)
            _spare = new byte[_arena.Length];
        int used = 0, kept = 0;
        for (int i = passed; i < _staged.Count; i++)
        {
            var record = _staged[i];
            _arena.AsSpan(record.Offset, record.Length).CopyTo(_spare.AsSpan(used));
            _staged[kept++] = record with { Offset = used };
            used += record.Length;
        }
        _staged.RemoveRange(kept, _staged.Count - kept);
        (_arena, _spare) = (_spare, _arena);
        _arenaUsed = used;
    }

    private readonly record struct StagedRecord(long Timestamp, long Sequence, int Offset, int Length);

    public void Dispose()
    {
        _stopping = true;
        if (_thread.IsAlive)
            _thread.Join(TimeSpan.FromSeconds(2));
        foreach (int fd in _fds)
            if (fd >= 0)
                Libc.close(fd);
    }
}
