using System.Diagnostics;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// Runs a real external program (redis-cli, redis-benchmark, redis-server). A missing tool is a
/// test failure that says how to install it, never a silent skip.
/// </summary>
public static class ExternalTool
{
    public static string Require(string name, string debianPackage)
    {
        foreach (string dir in (Environment.GetEnvironmentVariable("PATH") ?? "").Split(Path.PathSeparator))
        {
            string candidate = Path.Combine(dir, name);
            if (File.Exists(candidate))
                return candidate;
        }
        Assert.Fail($"'{name}' is not installed; install it with: sudo apt-get install -y {debianPackage}");
        return "";
    }

    public sealed record Result(int ExitCode, string StandardOutput, string StandardError);

    /// <summary>Runs a tool to completion, feeding <paramref name="input"/> on stdin if given.</summary>
    public static Result Run(string tool, string debianPackage, IEnumerable<string> arguments, byte[]? input = null, int timeoutMs = 120_000)
    {
        string path = Require(tool, debianPackage);
        var info = new ProcessStartInfo(path)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
        };
        foreach (var a in arguments)
            info.ArgumentList.Add(a);
        using var process = Process.Start(info)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        if (input is not null)
            process.StandardInput.BaseStream.Write(input);
        process.StandardInput.Close();
        if (!process.WaitForExit(timeoutMs))
        {
            process.Kill(entireProcessTree: true);
            Assert.Fail($"{tool} {string.Join(' ', arguments)} did not finish within {timeoutMs} ms");
        }
        return new Result(process.ExitCode, stdout.Result, stderr.Result);
    }

    public static Result RedisCli(int port, params string[] arguments)
        => Run("redis-cli", "redis-tools", ["-p", port.ToString(), .. arguments]);
}
