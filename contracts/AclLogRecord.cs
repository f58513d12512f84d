namespace Diagnostics.Contracts;

/// <summary>
/// An ACL LOG entry as ACL LOG shows it: a refused command, key or channel, or a failed login
/// (reason "auth"), grouped while it repeats within a minute. Context is Redis's (toplevel,
/// multi, lua) or "http" for the studio and the HTTP API. Never a password: only the user named.
/// </summary>
public sealed record AclLogRecord(long Count, string Reason, string Context, string Object, string Username, string ClientInfo, long CreatedUnixMs, long UpdatedUnixMs);
