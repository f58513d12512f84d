using Diagnostics.Fuzz.Harness;

namespace Diagnostics.Fuzz.Tests;

/// <summary>
/// Each fuzz target's corpus, run once: the seeds and the reproducers of every crash the fuzzers
/// found and that was fixed must all be taken in stride (refused or parsed, within the
/// allocation budget), as fuzz.sh's afl-fuzz runs would take them.
/// </summary>
public class CorpusTests
{
    public static TheoryData<string> Targets() => new(FuzzTargets.Names);

    [Theory]
    [MemberData(nameof(Targets))]
    public void EveryCorpusInputRunsWithoutAnUnexpectedException(string name)
    {
        var target = FuzzTargets.Create(name)!;
        string folder = Path.Combine(AppContext.BaseDirectory, "corpus", name);
        var files = CorpusReplay.Files([folder]).ToList();
        Assert.NotEmpty(files);
        var failures = new List<string>();
        foreach (string file in files)
        {
            if (CorpusReplay.RunFile(target, file) is { } error)
                failures.Add($"{Path.GetRelativePath(folder, file)}: {error}");
        }
        Assert.True(failures.Count == 0, $"{failures.Count} of {files.Count} {name} inputs failed:\n{string.Join("\n\n", failures)}");
    }
}
