using Diagnostics.Monitor.Aggregation;

namespace Diagnostics.Monitor.Linux;

/// <summary>
/// Turns sys_enter_* and sys_exit_* records into completed I/O events: the enter gives the
/// descriptor, the exit the result, the two timestamps the time inside the kernel. Enter and
/// exit are paired per thread; a thread that moved CPUs in between can have its exit read from
/// the other CPU's buffer first, so an early exit waits for its enter. A pair that cannot be
/// made (its other half lost) is counted, never guessed.
/// </summary>
public sealed class SyscallDecoder
{
    private readonly Slot[] _slots;
    private readonly int _commonPidOffset;
    private readonly Dictionary<int, Pending> _pending = [];
    private readonly DescriptorNames _names;
    private readonly IoAggregator _aggregator;
    private readonly long _wallOffsetMicros;

    /// <param name="formats">The sys_enter and sys_exit formats of every traced call, in <see cref="TracedSyscall.All"/> order.</param>
    /// <param name="wallOffsetMicros">Added to a trace timestamp in µs (the mono clock) to give unix µs.</param>
    public SyscallDecoder(IReadOnlyList<(EventFormat Enter, EventFormat Exit)> formats, DescriptorNames names, IoAggregator aggregator, long wallOffsetMicros)
    {
        _names = names;
        _aggregator = aggregator;
        _wallOffsetMicros = wallOffsetMicros;
        int maxId = 0;
        foreach (var (enter, exit) in formats)
            maxId = Math.Max(maxId, Math.Max(enter.Id, exit.Id));
        _slots = new Slot[maxId + 1];
        _commonPidOffset = formats[0].Enter.Field("common_pid").Offset;
        for (byte call = 0; call < formats.Count; call++)
        {
            var (enter, exit) = formats[call];
            // The descriptor of openat and accept is their result; every other call names it first.
            var fd = enter.TryField("fd", out var field) ? field : default;
            _slots[enter.Id] = new Slot(SlotKind.Enter, call, fd);
            _slots[exit.Id] = new Slot(SlotKind.Exit, call, exit.Field("ret"));
        }
    }

    /// <summary>Enters whose exit never came, and exits whose enter never came.</summary>
    public long Unpaired { get; private set; }

    /// <summary>Tracepoint records decoded: enters and exits, two per completed call.</summary>
    public long Records { get; private set; }

    /// <summary>Decodes one record. The caller holds the aggregator's gate.</summary>
    public void OnRecord(long timestamp, ReadOnlySpan<byte> record)
    {
        Records++;
        int id = BitConverter.ToUInt16(record);
        if (id >= _slots.Length || _slots[id].Kind == SlotKind.None)
            return;
        var slot = _slots[id];
        int tid = BitConverter.ToInt32(record[_commonPidOffset..]);
        long value = slot.Field.Size == 0 ? -1 : slot.Field.Read(record);
        ref var pending = ref System.Runtime.InteropServices.CollectionsMarshal.GetValueRefOrAddDefault(_pending, tid, out _);
        if (slot.Kind == SlotKind.Enter)
        {
            pending.Started = true;
            if (pending.HasExit && pending.ExitCall == slot.Call && pending.ExitTime >= timestamp)
            {
                Complete(tid, slot.Call, value, timestamp, pending.ExitResult, pending.ExitTime);
                pending.HasExit = false;
                return;
            }
            if (pending.HasEnter)
                Unpaired++;
            pending.HasEnter = true;
            pending.EnterCall = slot.Call;
            pending.EnterFd = value;
            pending.EnterTime = timestamp;
            return;
        }
        if (pending.HasEnter && pending.EnterCall == slot.Call && pending.EnterTime <= timestamp)
        {
            Complete(tid, slot.Call, pending.EnterFd, pending.EnterTime, value, timestamp);
            pending.HasEnter = false;
            return;
        }
        // A thread that was inside a call when tracing began exits without an enter: not a loss.
        if (!pending.Started)
            return;
        if (pending.HasExit)
            Unpaired++;
        pending.HasExit = true;
        pending.ExitCall = slot.Call;
        pending.ExitResult = value;
        pending.ExitTime = timestamp;
    }

    private void Complete(int tid, byte call, long fd, long enterTime, long result, long exitTime)
    {
        var syscall = TracedSyscall.All[call];
        var operation = syscall.Operation;
        int target;
        if (operation == IoOperation.Open)
        {
            if (result < 0)
                return;
            fd = result;
            target = _names.ResolveOpened(fd, syscall.OpensSocket);
        }
        else
        {
            target = _names.Resolve(fd);
        }
        if (_aggregator.Targets[target].Kind == TargetKind.Socket)
            operation = operation switch { IoOperation.Read => IoOperation.Receive, IoOperation.Write => IoOperation.Send, _ => operation };
        _aggregator.Add(new IoEvent(enterTime / 1000 + _wallOffsetMicros, tid, target, operation, call, result, exitTime - enterTime));
        if (operation == IoOperation.Close && result == 0)
            _names.Forget(fd);
    }

    private enum SlotKind : byte { None, Enter, Exit }

    private readonly record struct Slot(SlotKind Kind, byte Call, EventField Field);

    private struct Pending
    {
        /// <summary>An enter of this thread was seen: from then on an exit without one is a loss.</summary>
        public bool Started;
        public bool HasEnter;
        public byte EnterCall;
        public long EnterFd;
        public long EnterTime;
        public bool HasExit;
        public byte ExitCall;
        public long ExitResult;
        public long ExitTime;
    }
}
