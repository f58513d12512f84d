using System.Diagnostics;

namespace Diagnostics.Benchmarks;

/// <summary>Finds and runs the Redis reference tools; a missing one stops the run with the install command.</summary>
public static class ExternalTools
{
    public const string InstallHint = "apt-get install -y redis-server redis-tools";

    public static string Require(string name)
    {
        foreach (string dir in (Environment.GetEnvironmentVariable("PATH") ?? "").Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries))
        {
            string candidate = Path.Combine(dir, name);
            if (File.Exists(candidate))
                return candidate;
        }
        throw new HarnessException($"'{name}' was not found on PATH. Install the Redis reference tools with: {InstallHint}");
    }

    public sealed record Result(int ExitCode, string StandardOutput, string StandardError);

    /// <summary>
    /// Runs a tool to completion. <paramref name="feedInput"/>, when given, writes the tool's
    /// standard input (streamed, so a 300 MB RESP load never sits in memory whole).
    /// </summary>
    public static Result Run(string path, IEnumerable<string> arguments, TimeSpan timeout, Action<Stream>? feedInput = null)
    {
        var info = new ProcessStartInfo(path)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
        };
        foreach (string a in arguments)
            info.ArgumentList.Add(a);
        using var process = Process.Start(info) ?? throw new HarnessException($"could not start {path}");
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        try
        {
            feedInput?.Invoke(process.StandardInput.BaseStream);
        }
        catch (IOException)
        {
            // The tool closed its input early (it failed); its exit code and stderr say why.
        }
        try
        {
            process.StandardInput.Close();
        }
        catch (IOException)
        {
        }
        if (!process.WaitForExit(timeout))
        {
            process.Kill(entireProcessTree: true);
            throw new HarnessException($"{Path.GetFileName(path)} {string.Join(' ', info.ArgumentList)} did not finish within {timeout.TotalSeconds:0} s");
        }
        return new Result(process.ExitCode, stdout.Result, stderr.Result);
    }

    /// <summary>The first line a tool prints for --version (used for the machine table).</summary>
    public static string Version(string path, params string[] arguments)
    {
        var result = Run(path, arguments.Length == 0 ? ["--version"] : arguments, TimeSpan.FromSeconds(30));
        string text = result.StandardOutput.Length > 0 ? result.StandardOutput : result.StandardError;
        return text.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).FirstOrDefault() ?? "unknown";
    }
}
