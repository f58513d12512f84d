using System.Buffers;
using System.Buffers.Text;
using Diagnostics.Server.Commands;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Execution;

/// <summary>
/// The clients in MONITOR mode, and the line each is sent for every command the server runs, as
/// Redis's replicationFeedMonitors writes it: <c>+1764115200.123456 [0 127.0.0.1:50000] "set" "k" "v"</c>.
/// The executor feeds it after a command ran (so SELECT shows the database it selected, and the
/// commands of a transaction come as EXEC runs them, before EXEC itself); commands refused before
/// running, administrative commands and the replayed AOF are not shown. Secrets are shown as
/// "(redacted)", as in the slow log.
///
/// With no monitor the executor pays one field read per command: the list is an array replaced
/// whole on every change, so feeding takes no lock.
/// </summary>
public sealed class CommandMonitors
{
    private static readonly byte[] s_redacted = Redaction.MarkerUtf8.ToArray();
    private readonly Lock _gate = new();
    private volatile ClientSession[] _monitors = [];

    /// <summary>True while at least one client monitors.</summary>
    public bool Any => _monitors.Length != 0;

    /// <summary>Makes <paramref name="client"/> a monitor; false when it already is one.</summary>
    public bool Add(ClientSession client)
    {
        lock (_gate)
        {
            if (client.IsMonitor)
                return false;
            client.IsMonitor = true;
            _monitors = [.. _monitors, client];
            return true;
        }
    }

    /// <summary>RESET and disconnect: <paramref name="client"/> is sent nothing more.</summary>
    public void Remove(ClientSession client)
    {
        if (!client.IsMonitor)
            return;
        lock (_gate)
        {
            client.IsMonitor = false;
            _monitors = Array.FindAll(_monitors, m => !ReferenceEquals(m, client));
        }
    }

    /// <summary>Sends every monitor the line for a command <paramref name="client"/> just ran in <paramref name="database"/>.</summary>
    public void Feed(ClientSession client, int database, ArgList args, CommandSpec spec, ServerConfig config)
    {
        var monitors = _monitors;
        if (monitors.Length == 0)
            return;
        // The wall clock to the microsecond, as Redis's gettimeofday: only paid while someone monitors.
        long unixMicros = (DateTime.UtcNow.Ticks - DateTime.UnixEpoch.Ticks) / 10;
        byte[] line = Format(unixMicros, database, client.RunsScripts ? "lua" : client.Address, args, spec, config);
        foreach (var monitor in monitors)
            monitor.DeliverMonitorLine(line);
    }

    /// <summary>The RESP simple string a monitor receives (the same in RESP2 and RESP3, as in Redis).</summary>
    internal static byte[] Format(long unixMicros, int database, string origin, ArgList args, CommandSpec spec, ServerConfig config)
    {
        var line = new ArrayBufferWriter<byte>(64 + (int)Math.Min(args.TotalBytes * 2, 1 << 20));
        Write(line, "+"u8);
        WriteNumber(line, unixMicros / 1_000_000);
        Write(line, "."u8);
        Span<byte> micros = line.GetSpan(6);
        Utf8Formatter.TryFormat(unixMicros % 1_000_000, micros, out int written, new StandardFormat('D', 6));
        line.Advance(written);
        Write(line, " ["u8);
        WriteNumber(line, database);
        Write(line, " "u8);
        Span<byte> address = line.GetSpan(origin.Length * 3);
        line.Advance(System.Text.Encoding.UTF8.GetBytes(origin, address));
        Write(line, "]"u8);
        for (int i = 0; i < args.Count; i++)
        {
            Write(line, " "u8);
            if (spec.Redact is { } redact && redact(args, i, config))
                WriteQuoted(line, s_redacted);
            else
                WriteQuoted(line, args[i]);
        }
        Write(line, "\r\n"u8);
        return line.WrittenSpan.ToArray();
    }

    /// <summary>
    /// <paramref name="text"/> between double quotes with Redis's escapes (sdscatrepr): \" \\ \n
    /// \r \t \a \b, other bytes outside printable ASCII as \xHH. Written here rather than taken
    /// from a library because it must match Redis's output byte for byte.
    /// </summary>
    private static void WriteQuoted(ArrayBufferWriter<byte> line, ReadOnlySpan<byte> text)
    {
        Span<byte> output = line.GetSpan(text.Length * 4 + 2);
        int n = 0;
        output[n++] = (byte)'"';
        foreach (byte b in text)
        {
            switch (b)
            {
                case (byte)'\\': output[n++] = (byte)'\\'; output[n++] = (byte)'\\'; break;
                case (byte)'"': output[n++] = (byte)'\\'; output[n++] = (byte)'"'; break;
                case (byte)'\n': output[n++] = (byte)'\\'; output[n++] = (byte)'n'; break;
                case (byte)'\r': output[n++] = (byte)'\\'; output[n++] = (byte)'r'; break;
                case (byte)'\t': output[n++] = (byte)'\\'; output[n++] = (byte)'t'; break;
                case 7: output[n++] = (byte)'\\'; output[n++] = (byte)'a'; break;
                case 8: output[n++] = (byte)'\\'; output[n++] = (byte)'b'; break;
                default:
                    if (b is >= 0x20 and < 0x7f)
                    {
                        output[n++] = b;
                    }
                    else
                    {
                        output[n++] = (byte)'\\';
                        output[n++] = (byte)'x';
                        output[n++] = (byte)"0123456789abcdef"[b >> 4];
                        output[n++] = (byte)"0123456789abcdef"[b & 0xf];
                    }
                    break;
            }
        }
        output[n++] = (byte)'"';
        line.Advance(n);
    }

    private static void Write(ArrayBufferWriter<byte> line, ReadOnlySpan<byte> bytes) => line.Write(bytes);

    private static void WriteNumber(ArrayBufferWriter<byte> line, long value)
    {
        Span<byte> digits = line.GetSpan(20);
        Utf8Formatter.TryFormat(value, digits, out int written);
        line.Advance(written);
    }
}
