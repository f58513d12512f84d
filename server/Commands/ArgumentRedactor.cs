using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Commands;

/// <summary>
/// Says whether argument <paramref name="index"/> of a command carries a secret (a password), so
/// the slow log and anything else that records commands shows "(redacted)" in its place, as Redis 7.
/// </summary>
public delegate bool ArgumentRedactor(ArgList args, int index);
