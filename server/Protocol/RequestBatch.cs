using System.Buffers;
using System.Runtime.CompilerServices;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Protocol;

/// <summary>
/// The commands parsed from one read, with every argument copied into one contiguous native
/// arena: handlers see plain spans whatever the pipe's segment layout was, and the batch is
/// reused for the life of the connection, so parsing allocates nothing in steady state.
/// The arena is tracked memory, charged to the connection's thread like any query buffer.
/// </summary>
public sealed unsafe class RequestBatch : IDisposable
{
    public const int InitialArenaBytes = 16 * 1024;
    /// <summary>Parsing stops adding commands to a batch once its arguments fill this much.</summary>
    public const int TargetArenaBytes = 256 * 1024;
    // Past this (a batch with one huge argument), the arena is given back after the batch
    // instead of being kept; a normal full batch stays below it so its arena is reused.
    private const int RetainedArenaBytes = 1024 * 1024;

    private byte* _arena;
    private int _arenaCapacity;
    private int _arenaUsed;
    private ArgSlot[] _args = new ArgSlot[64];
    private int _argCount;
    private CommandSlot[] _commands = new CommandSlot[32];
    private int _commandCount;
    // The most arena bytes a batch used since the clients cron last looked (Redis's querybuf_peak):
    // written by the owner per batch, taken by the cron.
    private int _peakUsed;

    public int CommandCount => _commandCount;
    public int ArenaBytes => _arenaUsed;

    /// <summary>
    /// What the pending arguments hold: their bytes plus their slots, so a command of millions of
    /// empty arguments still counts against client-query-buffer-limit.
    /// </summary>
    public long PendingBytes => _arenaUsed + (long)_argCount * System.Runtime.CompilerServices.Unsafe.SizeOf<ArgSlot>();
    public int ArenaCapacity => _arenaCapacity;

    /// <summary>The arguments of command <paramref name="index"/>, name first.</summary>
    public ArgList this[int index]
    {
        get
        {
            ref CommandSlot slot = ref _commands[index];
            return new ArgList(_arena, _args, slot.FirstArg, slot.ArgCount);
        }
    }

    internal Mark Save() => new(_arenaUsed, _argCount, _commandCount, OpenArgsRemaining);

    internal void Restore(Mark mark)
    {
        _arenaUsed = mark.ArenaUsed;
        _argCount = mark.ArgCount;
        _commandCount = mark.CommandCount;
        OpenArgsRemaining = mark.OpenArgsRemaining;
    }

    /// <summary>
    /// Arguments the open multibulk command still lacks; 0 when no command is open. An open
    /// command's complete arguments stay in the arena across reads and batches.
    /// </summary>
    public long OpenArgsRemaining { get; internal set; }

    /// <summary>Opens a command expecting <paramref name="arguments"/> multibulk arguments (0 for inline).</summary>
    internal void BeginCommand(long arguments)
    {
        if (_commandCount == _commands.Length)
            Array.Resize(ref _commands, _commands.Length * 2);
        _commands[_commandCount] = new CommandSlot(_argCount, 0);
        OpenArgsRemaining = arguments;
    }

    internal void EndCommand()
    {
        ref CommandSlot slot = ref _commands[_commandCount];
        slot.ArgCount = _argCount - slot.FirstArg;
        _commandCount++;
        OpenArgsRemaining = 0;
    }

    /// <summary>Appends an argument copied from <paramref name="source"/>.</summary>
    internal void AddArg(ReadOnlySequence<byte> source)
    {
        int length = checked((int)source.Length);
        byte* target = Reserve(length);
        source.CopyTo(new Span<byte>(target, length));
        CommitArg(length);
    }

    internal void AddArg(ReadOnlySpan<byte> source)
    {
        byte* target = Reserve(source.Length);
        source.CopyTo(new Span<byte>(target, source.Length));
        CommitArg(source.Length);
    }

    /// <summary>Space for an argument of up to <paramref name="length"/> bytes, filled by the caller.</summary>
    internal byte* Reserve(int length)
    {
        if (_arenaCapacity - _arenaUsed < length)
            Grow(length);
        return _arena + _arenaUsed;
    }

    /// <summary>Records the argument written at the reserved position.</summary>
    internal void CommitArg(int length)
    {
        if (_argCount == _args.Length)
            Array.Resize(ref _args, _args.Length * 2);
        _args[_argCount++] = new ArgSlot(_arenaUsed, length);
        _arenaUsed += length;
    }

    /// <summary>
    /// Forgets the commands executed so far, keeping the arguments of an open command (moved to
    /// the front); the arena is kept for reuse unless it grew large.
    /// </summary>
    public void Clear()
    {
        if (_arenaUsed > _peakUsed)
            _peakUsed = _arenaUsed;
        if (OpenArgsRemaining > 0)
        {
            KeepOpenCommandOnly();
            return;
        }
        _arenaUsed = 0;
        _argCount = 0;
        _commandCount = 0;
        if (_arenaCapacity > RetainedArenaBytes)
            ReleaseArena();
        if (_args.Length > 4096)
            _args = new ArgSlot[64];
        if (_commands.Length > 4096)
            _commands = new CommandSlot[32];
    }

    /// <summary>Forgets everything, an open command included (a replay that reached a truncated tail).</summary>
    public void Discard()
    {
        OpenArgsRemaining = 0;
        _arenaUsed = 0;
        _argCount = 0;
        _commandCount = 0;
    }

    private void KeepOpenCommandOnly()
    {
        int firstArg = _commands[_commandCount].FirstArg;
        int openArgs = _argCount - firstArg;
        int firstByte = openArgs > 0 ? _args[firstArg].Offset : _arenaUsed;
        int openBytes = _arenaUsed - firstByte;
        if (openBytes > 0 && firstByte > 0)
            new Span<byte>(_arena + firstByte, openBytes).CopyTo(new Span<byte>(_arena, openBytes));
        for (int i = 0; i < openArgs; i++)
        {
            ArgSlot slot = _args[firstArg + i];
            _args[i] = new ArgSlot(slot.Offset - firstByte, slot.Length);
        }
        _argCount = openArgs;
        _arenaUsed = openBytes;
        _commandCount = 0;
        _commands[0] = new CommandSlot(0, 0);
    }

    public void Dispose() => ReleaseArena();

    /// <summary>
    /// The largest arena use of a batch since the previous call (the clients cron, once a second).
    /// A batch finishing at that moment may have its peak lost: the arena is then trimmed a pass
    /// early and grows again, which costs time, never correctness.
    /// </summary>
    public int TakePeak() => Interlocked.Exchange(ref _peakUsed, 0);

    /// <summary>
    /// Gives back arena room beyond <paramref name="keepBytes"/>, never what an open command's
    /// arguments hold; 0 frees an empty arena altogether. The owner's thread only, between batches.
    /// </summary>
    public void Trim(int keepBytes)
    {
        int keep = Math.Max(keepBytes, _arenaUsed);
        if (keep >= _arenaCapacity)
            return;
        if (keep == 0)
        {
            ReleaseArena();
            return;
        }
        _arena = TrackedAllocator.Realloc(_arena, (nuint)keep);
        _arenaCapacity = keep;
    }

    private void ReleaseArena()
    {
        TrackedAllocator.Free(_arena);
        _arena = null;
        _arenaCapacity = 0;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Grow(int length)
    {
        _arena = TrackedAllocator.GrowDoubling(_arena, ref _arenaCapacity, (long)_arenaUsed + length, InitialArenaBytes, "request batch");
    }

    internal readonly record struct Mark(int ArenaUsed, int ArgCount, int CommandCount, long OpenArgsRemaining);

    internal struct CommandSlot(int firstArg, int argCount)
    {
        public int FirstArg = firstArg;
        public int ArgCount = argCount;
    }
}

/// <summary>Offset and length of one argument in a batch's arena.</summary>
public readonly struct ArgSlot(int offset, int length)
{
    public readonly int Offset = offset;
    public readonly int Length = length;
}

/// <summary>The arguments of one command: index 0 is the command name.</summary>
public readonly unsafe ref struct ArgList
{
    private readonly byte* _arena;
    private readonly ReadOnlySpan<ArgSlot> _slots;

    internal ArgList(byte* arena, ArgSlot[] args, int first, int count)
    {
        _arena = arena;
        _slots = new ReadOnlySpan<ArgSlot>(args, first, count);
    }

    private ArgList(byte* arena, ReadOnlySpan<ArgSlot> slots)
    {
        _arena = arena;
        _slots = slots;
    }

    public int Count => _slots.Length;

    /// <summary>The arguments from <paramref name="first"/> on, as a command of their own (COMMAND GETKEYS).</summary>
    public ArgList From(int first) => new(_arena, _slots[first..]);

    public ReadOnlySpan<byte> this[int index]
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get
        {
            ArgSlot slot = _slots[index];
            return new ReadOnlySpan<byte>(_arena + slot.Offset, slot.Length);
        }
    }

    /// <summary>Bytes the arguments occupy (CLIENT LIST's argv-mem).</summary>
    public long TotalBytes
    {
        get
        {
            long total = 0;
            foreach (var slot in _slots)
                total += slot.Length;
            return total;
        }
    }
}
