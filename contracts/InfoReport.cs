namespace Diagnostics.Contracts;

/// <summary>INFO as data: section name (lower case, as INFO accepts it) to its fields, in INFO's order.</summary>
public sealed record InfoReport(Dictionary<string, Dictionary<string, string>> Sections);
