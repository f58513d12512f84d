namespace Diagnostics.Contracts;

/// <summary>
/// A file a debug package leaves out because the login that took it may not see it: the
/// permission names it lacked (as the studio names them) and the ACL rules that grant them.
/// </summary>
public sealed record PackageOmission(string Name, string Permissions, string Rules);
