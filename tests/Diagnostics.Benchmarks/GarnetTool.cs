using System.Globalization;

namespace Diagnostics.Benchmarks;

/// <summary>
/// Microsoft Garnet, the second peer beside redis-server: the garnet-server .NET tool, pinned to
/// one version and installed on first use with `dotnet tool install garnet-server --tool-path`
/// into the repository's .tools/garnet (ignored by git), so every machine measures the same build.
/// </summary>
public static class GarnetTool
{
    /// <summary>The newest garnet-server the package registry serves (nuget.tsv of the workplace).</summary>
    public const string Version = "2.2.8";
    public const string PackageId = "garnet-server";
    public const string ToolFolder = ".tools/garnet";

    /// <summary>The garnet-server executable: <paramref name="explicitPath"/>, or the pinned install, installed now if missing.</summary>
    public static string Require(string? explicitPath, TextWriter progress)
    {
        if (explicitPath is not null)
        {
            string given = Path.GetFullPath(explicitPath);
            if (!File.Exists(given))
                throw new HarnessException($"--garnet-path {given} does not exist");
            return given;
        }
        string folder = Path.Combine(RepositoryRoot(), ToolFolder);
        string executable = Path.Combine(folder, "garnet-server");
        if (File.Exists(executable) && InstalledVersion(executable) == Version)
            return executable;
        progress.WriteLine($"garnet: installing {PackageId} {Version} into {folder} (dotnet tool install)...");
        string dotnet = ExternalTools.Require("dotnet");
        if (File.Exists(executable))
            ExternalTools.Run(dotnet, ["tool", "uninstall", PackageId, "--tool-path", folder], TimeSpan.FromMinutes(2));
        var result = ExternalTools.Run(dotnet, ["tool", "install", PackageId, "--version", Version, "--tool-path", folder], TimeSpan.FromMinutes(5));
        if (result.ExitCode != 0 || !File.Exists(executable))
            throw new HarnessException($"dotnet tool install {PackageId} --version {Version} --tool-path {folder} failed (exit code {result.ExitCode}):\n{result.StandardOutput}{result.StandardError}");
        return executable;
    }

    /// <summary>"2.2.8" out of garnet-server --version ("GarnetServer 2.2.8+&lt;commit&gt;"), or null.</summary>
    public static string? InstalledVersion(string executable)
    {
        string line = ExternalTools.Version(executable);
        string[] words = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        return words.Length >= 2 ? words[1].Split('+')[0] : null;
    }

    /// <summary>The folder holding Diagnostics.sln, above the harness's build output.</summary>
    private static string RepositoryRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "Diagnostics.sln")))
                return dir.FullName;
        }
        throw new HarnessException(string.Create(CultureInfo.InvariantCulture,
            $"no Diagnostics.sln above {AppContext.BaseDirectory}: pass --garnet-path to a garnet-server executable"));
    }
}
