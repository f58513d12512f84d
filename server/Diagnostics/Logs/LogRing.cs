using System.Globalization;
using System.Text;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Diagnostics.Logs;

/// <summary>
/// The last few thousand log lines, kept in memory so a debug package carries the log even when
/// nobody can reach the host's files or journal. A logger provider beside the console one: the
/// same lines, at the same level. Secrets never reach it because the server never logs them.
/// </summary>
public sealed class LogRing : ILoggerProvider
{
    public const int DefaultCapacity = 5000;

    private readonly Lock _gate = new();
    private readonly string[] _lines;
    private int _next;
    private int _count;
    private long _dropped;

    public LogRing(int capacity = DefaultCapacity) => _lines = new string[capacity];

    /// <summary>Lines that fell out of the ring since start.</summary>
    public long Overwritten => Volatile.Read(ref _dropped);

    public void Add(string line)
    {
        lock (_gate)
        {
            _lines[_next] = line;
            _next = (_next + 1) % _lines.Length;
            if (_count < _lines.Length)
                _count++;
            else
                _dropped++;
        }
    }

    /// <summary>The kept lines, oldest first.</summary>
    public string[] Lines()
    {
        lock (_gate)
        {
            var copy = new string[_count];
            int first = (_next - _count + _lines.Length) % _lines.Length;
            for (int i = 0; i < _count; i++)
                copy[i] = _lines[(first + i) % _lines.Length];
            return copy;
        }
    }

    public ILogger CreateLogger(string categoryName) => new RingLogger(this, categoryName);

    public void Dispose()
    {
    }

    private sealed class RingLogger(LogRing ring, string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel != LogLevel.None;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (!IsEnabled(logLevel))
                return;
            var line = new StringBuilder(128)
                .Append(DateTime.UtcNow.ToString("yyyy-MM-dd HH:mm:ss.fff", CultureInfo.InvariantCulture))
                .Append(' ').Append(LevelName(logLevel))
                .Append(' ').Append(category)
                .Append(": ").Append(formatter(state, exception));
            if (exception is not null)
                line.Append(Environment.NewLine).Append(exception);
            ring.Add(line.ToString());
        }

        private static string LevelName(LogLevel level) => level switch
        {
            LogLevel.Trace => "trce",
            LogLevel.Debug => "dbug",
            LogLevel.Information => "info",
            LogLevel.Warning => "warn",
            LogLevel.Error => "fail",
            _ => "crit",
        };
    }
}
