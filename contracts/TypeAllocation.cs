namespace Diagnostics.Contracts;

/// <summary>Managed bytes allocated for one type, estimated from allocation ticks (each tick stands for about 100 KB).</summary>
public sealed record TypeAllocation(string TypeName, long Bytes, long Ticks);
