namespace Diagnostics.Fuzz.Harness;

/// <summary>A parser allocated more than its input could justify, or kept native memory after it.</summary>
public sealed class AllocationBudgetExceededException(string message) : Exception(message);
