namespace Diagnostics.Server.Api;

/// <summary>
/// Marks an HTTP GET endpoint as debug information: the debug package includes its response
/// under <see cref="FileName"/>, requested with <see cref="Query"/>. Adding an endpoint with
/// this mark is all it takes to put its data in every package.
/// </summary>
public sealed record DebugEntryMetadata(string FileName, string Query = "");
