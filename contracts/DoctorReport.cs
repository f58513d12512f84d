namespace Diagnostics.Contracts;

/// <summary>The doctor's findings at one moment, worst first, and how many rules ran over what.</summary>
public sealed record DoctorReport(long TakenUnixMs, int RulesRun, IReadOnlyList<Finding> Findings);
