using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>The AOF cannot be written: every write command is refused with MISCONF.</summary>
public sealed class AofWriteErrorRule : IDoctorRule
{
    public string Id => "aof-write-error";
    public string Area => "persistence";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        if (input.InfoField("persistence", "aof_last_write_status") != "err")
            yield break;
        string error = input.InfoField("persistence", "aof_last_write_error") ?? "unknown error";
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = FindingSeverity.Critical,
            Title = "The append-only file cannot be written",
            Seen = $"The last AOF write failed ({error}); write commands are refused with MISCONF until a retry succeeds. Reads go on.",
            Advice = "Free space or fix the device under the AOF directory (dir / appenddirname); the server retries every second and resumes by itself.",
            Evidence = new() { ["aof_last_write_status"] = "err", ["aof_last_write_error"] = error },
            Chart = MetricNames.DiskWriteBytesPerSecond,
        };
    }
}
