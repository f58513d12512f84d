using Diagnostics.Server.Configuration;
using Diagnostics.Server.Protocol;

namespace Diagnostics.Server.Commands;

/// <summary>
/// Says whether argument <paramref name="index"/> of a command carries a secret (a password, a
/// key), so the slow log and anything else that records commands shows "(redacted)" in its place,
/// as Redis 7. <paramref name="config"/> is there for CONFIG SET, whose values are secret when
/// their setting is (<see cref="ConfigParameter.Secret"/>).
/// </summary>
public delegate bool ArgumentRedactor(ArgList args, int index, ServerConfig config);
