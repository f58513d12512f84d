using System.Diagnostics;
using System.Text;
using Diagnostics.Server.Commands;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Diagnostics.SlowCommands;

/// <summary>
/// The last slowlog-max-len commands that ran for at least slowlog-log-slower-than microseconds,
/// newest first, as Redis keeps them: at most 32 arguments (the last one then says how many more
/// there were), each cut to 128 bytes, secrets replaced by "(redacted)". Only a slow command
/// reaches the lock and allocates; the check on the data path is one comparison.
/// </summary>
public sealed class SlowLog
{
    private const int MaxArguments = 32;
    private const int MaxArgumentBytes = 128;
    private static readonly byte[] s_redacted = Redaction.MarkerUtf8.ToArray();

    private readonly Lock _gate = new();
    private readonly LinkedList<SlowLogEntry> _entries = new();
    // Since start or SLOWLOG RESET: every slow call, not just the log's last slowlog-max-len.
    private readonly SlowCallTotals _totals = new();
    private long _nextId;
    private int _maxLength = 128;

    public SlowLog() => ThresholdMicros = 10_000;

    /// <summary>slowlog-log-slower-than in microseconds; negative turns the log off, 0 logs every command.</summary>
    public long ThresholdMicros
    {
        get => _thresholdMicros;
        set
        {
            _thresholdMicros = value;
            // The data path compares Stopwatch ticks: no conversion per command.
            _thresholdTicks = value < 0 ? long.MaxValue : value * Stopwatch.Frequency / 1_000_000;
        }
    }
    private long _thresholdMicros;
    private long _thresholdTicks;

    /// <summary>slowlog-max-len; lowering it drops the oldest entries at once.</summary>
    public int MaxLength
    {
        get => _maxLength;
        set
        {
            lock (_gate)
            {
                _maxLength = value;
                Trim();
            }
        }
    }

    /// <summary>Commands logged since start, including those trimmed or reset away (the history's slow-commands rate).</summary>
    public long TotalLogged => Volatile.Read(ref _totalLogged);
    private long _totalLogged;

    public int Length
    {
        get { lock (_gate) return _entries.Count; }
    }

    /// <summary>True when a command that took <paramref name="ticks"/> Stopwatch ticks goes in the log.</summary>
    public bool IsSlow(long ticks) => ticks >= _thresholdTicks;

    /// <summary>Logs a command; <paramref name="config"/> says which settings are secret, for CONFIG SET's values.</summary>
    public void Add(CommandSpec spec, ArgList args, ServerConfig config, long micros, long clientId, string clientAddress, string clientName)
    {
        int count = Math.Min(args.Count, MaxArguments);
        var arguments = new byte[count][];
        for (int i = 0; i < count; i++)
        {
            if (count != args.Count && i == count - 1)
                arguments[i] = Encoding.ASCII.GetBytes($"... ({args.Count - count + 1} more arguments)");
            else if (spec.Redact is { } redact && redact(args, i, config))
                arguments[i] = s_redacted;
            else if (args[i].Length > MaxArgumentBytes)
                arguments[i] = [.. args[i][..MaxArgumentBytes], .. Encoding.ASCII.GetBytes($"... ({args[i].Length - MaxArgumentBytes} more bytes)")];
            else
                arguments[i] = args[i].ToArray();
        }
        long now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        Interlocked.Increment(ref _totalLogged);
        lock (_gate)
        {
            _entries.AddFirst(new SlowLogEntry(_nextId++, now, micros, arguments, clientId, clientAddress, clientName,
                Scripting.ScriptArguments.ScriptOf(spec, args), Scripting.ScriptArguments.SourceIndexOf(spec, args.Count)));
            Trim();
            _totals.Add(spec.FullName, micros, now, clientId, clientAddress, clientName);
        }
    }

    /// <summary>Every slow call since start or SLOWLOG RESET, by command and by client (the log itself keeps only the newest).</summary>
    public SlowCallTotals.Summary Totals()
    {
        lock (_gate)
            return _totals.Snapshot();
    }

    /// <summary>The newest <paramref name="count"/> entries (all of them for a negative count).</summary>
    public List<SlowLogEntry> Newest(long count)
    {
        lock (_gate)
        {
            var result = new List<SlowLogEntry>(count < 0 ? _entries.Count : (int)Math.Min(count, _entries.Count));
            foreach (var entry in _entries)
            {
                if (count >= 0 && result.Count >= count)
                    break;
                result.Add(entry);
            }
            return result;
        }
    }

    public void Reset()
    {
        lock (_gate)
        {
            _entries.Clear();
            _totals.Clear();
        }
    }

    private void Trim()
    {
        while (_entries.Count > _maxLength)
            _entries.RemoveLast();
    }
}
