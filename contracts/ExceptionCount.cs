namespace Diagnostics.Contracts;

/// <summary>First-chance exceptions of one type thrown in the server, with the last message seen.</summary>
public sealed record ExceptionCount(string TypeName, long Count, string LastMessage);
