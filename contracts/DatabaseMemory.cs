namespace Diagnostics.Contracts;

/// <summary>Keys and table overhead of one database, summed over the shards.</summary>
public sealed record DatabaseMemory(int Index, long Keys, long Expires, long TableOverheadBytes);
