using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;

namespace Diagnostics.Benchmarks;

/// <summary>
/// Writes commands as RESP multibulk into a stream in 64 KiB blocks; arguments are text (ASCII)
/// or raw bytes (a bitmap's value). Counts the commands, so a pipe can check it got a reply each.
/// </summary>
public sealed class RespCommandWriter(Stream output)
{
    private const int BlockSize = 64 * 1024;
    private readonly MemoryStream _block = new(BlockSize + 1024);

    public long Commands { get; private set; }

    public void Command(params string[] args)
    {
        Header(args.Length);
        foreach (string arg in args)
            Argument(Encoding.ASCII.GetBytes(arg));
        Done();
    }

    /// <summary>A command whose last argument is raw bytes (SET key &lt;bytes&gt;).</summary>
    public void Command(string name, string key, byte[] value)
    {
        Header(3);
        Argument(Encoding.ASCII.GetBytes(name));
        Argument(Encoding.ASCII.GetBytes(key));
        Argument(value);
        Done();
    }

    private void Header(int count) => Ascii($"*{count}\r\n");

    private void Argument(byte[] bytes)
    {
        Ascii($"${bytes.Length}\r\n");
        _block.Write(bytes);
        _block.Write("\r\n"u8);
    }

    private void Ascii(string text) => _block.Write(Encoding.ASCII.GetBytes(text));

    private void Done()
    {
        Commands++;
        if (_block.Length >= BlockSize)
            Flush();
    }

    public void Flush()
    {
        output.Write(_block.GetBuffer(), 0, (int)_block.Length);
        _block.SetLength(0);
        output.Flush();
    }
}

/// <summary>
/// Feeds generated commands to a server through `redis-cli --pipe` (replies read and counted by
/// redis-cli, not by the harness) and checks that every command got a reply and none was an error.
/// </summary>
public static partial class RedisCliPipe
{
    /// <summary>Runs the commands <paramref name="write"/> produces; returns how many there were.</summary>
    public static long Run(string redisCli, ServerUnderTest server, string what, Action<RespCommandWriter> write)
    {
        long commands = 0;
        var result = ExternalTools.Run(redisCli, ["-h", "127.0.0.1", "-p", server.Port.ToString(CultureInfo.InvariantCulture), "--pipe"],
            TimeSpan.FromMinutes(10), input =>
            {
                var writer = new RespCommandWriter(input);
                write(writer);
                writer.Flush();
                commands = writer.Commands;
            });
        server.EnsureRunning();
        string output = result.StandardOutput + result.StandardError;
        var summary = PipeSummary().Match(output);
        if (result.ExitCode != 0 || !summary.Success
            || summary.Groups["errors"].Value != "0"
            || long.Parse(summary.Groups["replies"].Value, CultureInfo.InvariantCulture) != commands)
        {
            string shown = output.Length > 4000 ? output[..2000] + "\n...\n" + output[^2000..] : output;
            throw new HarnessException($"redis-cli --pipe ({what}, {commands:N0} commands) on {server.Name} port {server.Port} failed (exit code {result.ExitCode}):\n{shown}");
        }
        return commands;
    }

    [GeneratedRegex(@"errors:\s*(?<errors>\d+),\s*replies:\s*(?<replies>\d+)")]
    private static partial Regex PipeSummary();
}
