namespace Diagnostics.Server.Api;

/// <summary>
/// A request feature present only on requests the server makes to its own endpoints (the debug
/// package): no client can set a feature, so the API gate can trust it.
/// </summary>
public sealed class InProcessRequest;
