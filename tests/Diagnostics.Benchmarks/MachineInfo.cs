using System.Runtime.InteropServices;

namespace Diagnostics.Benchmarks;

/// <summary>What the numbers were measured on, for the report's header table.</summary>
public sealed record MachineInfo(string Cpu, int Cores, string OperatingSystem, DateTime DateUtc, string DotnetRuntime, string DotnetSdk, string RedisServer, string RedisBenchmark, string? Garnet = null)
{
    public static MachineInfo Collect(string redisServer, string redisBenchmark)
        => new(
            CpuModel(),
            Environment.ProcessorCount,
            OperatingSystemName(),
            DateTime.UtcNow,
            RuntimeInformation.FrameworkDescription,
            Sdk(),
            ExternalTools.Version(redisServer),
            ExternalTools.Version(redisBenchmark));

    private static string CpuModel()
    {
        const string cpuinfo = "/proc/cpuinfo";
        if (File.Exists(cpuinfo))
        {
            foreach (string line in File.ReadLines(cpuinfo))
            {
                if (line.StartsWith("model name", StringComparison.Ordinal) && line.Contains(':'))
                    return line[(line.IndexOf(':') + 1)..].Trim();
            }
        }
        return RuntimeInformation.ProcessArchitecture.ToString();
    }

    private static string OperatingSystemName()
    {
        const string osRelease = "/etc/os-release";
        const string kernelRelease = "/proc/sys/kernel/osrelease";
        string kernel = File.Exists(kernelRelease) ? "Linux " + File.ReadAllText(kernelRelease).Trim() : RuntimeInformation.OSDescription;
        if (File.Exists(osRelease))
        {
            foreach (string line in File.ReadLines(osRelease))
            {
                if (line.StartsWith("PRETTY_NAME=", StringComparison.Ordinal))
                    return $"{line["PRETTY_NAME=".Length..].Trim('"')} ({kernel})";
            }
        }
        return kernel;
    }

    private static string Sdk()
    {
        try
        {
            return "SDK " + ExternalTools.Version("dotnet", "--version");
        }
        catch (Exception e) when (e is HarnessException or System.ComponentModel.Win32Exception)
        {
            return "SDK unknown";
        }
    }
}
