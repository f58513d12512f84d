using System.Runtime.InteropServices;

namespace Diagnostics.Monitor.Linux;

/// <summary>
/// Drains an instance's per-CPU binary ring buffers (trace_pipe_raw) on one thread: a
/// non-blocking read returns a page with whatever is committed, the page is walked under the
/// aggregator's gate, and when every CPU is empty the thread sleeps briefly. One page per read
/// keeps the copy small; the kernel's buffers (sized by the source) absorb the bursts between.
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
    private volatile bool _stopping;

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
                for (int cpu = 0; cpu < _fds.Length && !_stopping; cpu++)
                {
                    // A few pages per CPU per turn, so one busy CPU cannot starve the others' pairing.
                    for (int n = 0; n < 64 && ReadPage(_fds[cpu], page); n++)
                        any = true;
                }
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
        lock (_gate)
        {
            long missed = _layout.Walk(page.AsSpan(0, (int)read), _onEvent);
            if (missed > 0)
                MissedInPages += missed;
        }
        return true;
    }

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
