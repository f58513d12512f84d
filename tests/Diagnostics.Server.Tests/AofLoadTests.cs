using System.Text;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// Loading damaged files: a command cut off at the end of the last file is dropped with a warning
/// (aof-load-truncated yes) and the file is cut back so appends continue cleanly; anything else
/// malformed stops the server with the file name and byte offset, as the operator needs to fix it.
/// </summary>
public sealed class AofLoadTests
{
    private const string Manifest = "appendonly.aof.manifest";
    private const string Incr = "appendonly.aof.1.incr.aof";

    /// <summary>Starts a server on <paramref name="dir"/>, writes <paramref name="count"/> keys, shuts it down; returns the incr file's length.</summary>
    private static long WriteKeys(TempDirectory dir, int count)
    {
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            for (int i = 0; i < count; i++)
                RespAssert.Ok(c.Call("SET", $"load:{i}", $"value-{i}"));
            c.Send("SHUTDOWN");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)));
        }
        return new FileInfo(Path.Combine(dir.AppendDirectory, Incr)).Length;
    }

    private static void AppendBytes(TempDirectory dir, string file, byte[] bytes)
    {
        using var stream = new FileStream(Path.Combine(dir.AppendDirectory, file), FileMode.Append);
        stream.Write(bytes);
    }

    [Fact]
    public void TruncatedTailIsCutOffWithAWarningAndAppendsContinueCleanly()
    {
        using var dir = new TempDirectory();
        long length = WriteKeys(dir, 50);
        AppendBytes(dir, Incr, Encoding.ASCII.GetBytes("*3\r\n$3\r\nSET\r\n$9\r\nload:tail\r\n$5\r\nval"));

        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            Assert.Contains($"short read while loading the AOF file {Incr}", server.Output);
            Assert.Contains("loaded anyway because aof-load-truncated is enabled", server.Output);
            Assert.Equal(length, new FileInfo(Path.Combine(dir.AppendDirectory, Incr)).Length);
            RespAssert.Integer(50, c.Call("DBSIZE"));
            RespAssert.Null(c.Call("GET", "load:tail"));
            RespAssert.Ok(c.Call("SET", "load:after", "clean"));
            c.Send("SHUTDOWN");
            Assert.True(server.WaitForExit(TimeSpan.FromSeconds(30)));
        }
        var check = ExternalTool.Run("redis-check-aof", "redis-tools", [Path.Combine(dir.AppendDirectory, Manifest)]);
        Assert.True(check.ExitCode == 0, $"redis-check-aof failed after the cut:\n{check.StandardOutput}");
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            RespAssert.Bulk("clean", c.Call("GET", "load:after"));
            RespAssert.Integer(51, c.Call("DBSIZE"));
        }
    }

    [Fact]
    public void TruncatedTailIsRefusedWhenAofLoadTruncatedIsNo()
    {
        using var dir = new TempDirectory();
        long length = WriteKeys(dir, 10);
        AppendBytes(dir, Incr, Encoding.ASCII.GetBytes("*2\r\n$4\r\nINCR"));
        var (exitCode, output) = ServerProcess.RunUntilExit("--appendonly", "yes", "--dir", dir.Path, "--aof-load-truncated", "no");
        Assert.Equal(1, exitCode);
        Assert.Contains($"Unexpected end of file reading the append only file {Incr} at offset {length}", output);
        Assert.DoesNotContain("Ready to accept connections", output);
    }

    /// <summary>A damaged command in the middle names the file and the offset where that command starts.</summary>
    [Fact]
    public void CorruptionInTheMiddleRefusesToStartAndNamesFileAndOffset()
    {
        using var dir = new TempDirectory();
        WriteKeys(dir, 30);
        string path = Path.Combine(dir.AppendDirectory, Incr);
        byte[] bytes = File.ReadAllBytes(path);
        string text = Encoding.ASCII.GetString(bytes);
        string command = "*3\r\n$3\r\nSET\r\n$7\r\nload:15\r\n";
        int offset = text.IndexOf(command, StringComparison.Ordinal);
        Assert.True(offset > 0, "the key to damage was not found in the incr file");
        bytes[offset + 4] = (byte)'#'; // "$3" -> "#3": where a bulk must start
        File.WriteAllBytes(path, bytes);

        var (exitCode, output) = ServerProcess.RunUntilExit("--appendonly", "yes", "--dir", dir.Path);
        Assert.Equal(1, exitCode);
        Assert.Contains($"Bad file format reading the append only file {Incr} at offset {offset}", output);
        Assert.DoesNotContain("Ready to accept connections", output);
    }

    [Fact]
    public void UnknownCommandRefusesToStart()
    {
        using var dir = new TempDirectory();
        long length = WriteKeys(dir, 3);
        AppendBytes(dir, Incr, RespClient.Encode("NOSUCHCOMMAND", "x"));
        AppendBytes(dir, Incr, RespClient.Encode("SET", "load:later", "x"));
        var (exitCode, output) = ServerProcess.RunUntilExit("--appendonly", "yes", "--dir", dir.Path);
        Assert.Equal(1, exitCode);
        Assert.Contains($"Unknown command 'NOSUCHCOMMAND' reading the append only file {Incr} at offset {length}", output);
    }

    [Fact]
    public void ManifestNamingAMissingFileRefusesToStart()
    {
        using var dir = new TempDirectory();
        WriteKeys(dir, 3);
        File.Delete(Path.Combine(dir.AppendDirectory, Incr));
        var (exitCode, output) = ServerProcess.RunUntilExit("--appendonly", "yes", "--dir", dir.Path);
        Assert.Equal(1, exitCode);
        Assert.Contains($"The AOF file {Incr} listed in the manifest doesn't exist", output);
    }

    [Fact]
    public void UnfinishedTransactionAtTheEndIsNotApplied()
    {
        using var dir = new TempDirectory();
        long length = WriteKeys(dir, 5);
        AppendBytes(dir, Incr, RespClient.EncodeAll(["MULTI"], ["SET", "load:in-multi", "x"], ["INCR", "load:counter"]));
        using (var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path))
        using (var c = server.Connect())
        {
            RespAssert.Null(c.Call("GET", "load:in-multi"));
            RespAssert.Null(c.Call("GET", "load:counter"));
            RespAssert.Integer(5, c.Call("DBSIZE"));
        }
        Assert.Equal(length, new FileInfo(Path.Combine(dir.AppendDirectory, Incr)).Length);
    }

    [Fact]
    public void CompleteTransactionsAndAnnotationsAreApplied()
    {
        using var dir = new TempDirectory();
        WriteKeys(dir, 1);
        AppendBytes(dir, Incr, Encoding.ASCII.GetBytes("#TS:1700000000\r\n"));
        AppendBytes(dir, Incr, RespClient.EncodeAll(["MULTI"], ["SET", "load:tx-a", "1"], ["SET", "load:tx-b", "2"], ["EXEC"]));
        using var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir.Path);
        using var c = server.Connect();
        RespAssert.Bulk("1", c.Call("GET", "load:tx-a"));
        RespAssert.Bulk("2", c.Call("GET", "load:tx-b"));
    }
}
