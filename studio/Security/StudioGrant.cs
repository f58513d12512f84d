namespace Diagnostics.Studio.Security;

/// <summary>
/// Who is using the studio and what they may do, as of now: read again on every refresh, so an
/// ACL SETUSER that takes a permission away takes it from open pages too.
/// </summary>
/// <param name="Who">How pages name the login: "user 'watcher'", "the API key", "the default user".</param>
/// <param name="User">The ACL user's name, or null for the API key.</param>
public sealed record StudioGrant(string Who, string? User, StudioPermissions Permissions)
{
    public bool Has(StudioPermissions needed) => (Permissions & needed) == needed;

    /// <summary>Why <paramref name="needed"/> is refused: who lacks what, and the ACL rules that would grant it.</summary>
    public string Refusal(StudioPermissions needed, string what)
    {
        if (ReferenceEquals(this, Ended))
            return "This session has ended (its user was deleted or turned off, its password changed, or the API key replaced): log in again.";
        var missing = StudioPermission.Missing(needed, Permissions);
        return User is null
            ? $"The API key's scope (http-api-key-scope) does not include {StudioPermission.Names(missing)}, needed to {what}."
            : $"The ACL {Who} may not {what}: that needs {StudioPermission.Rules(missing)} (ACL SETUSER {User} {StudioPermission.Rules(missing)}).";
    }

    /// <summary>A session whose login no longer holds (the user deleted, turned off, or its passwords changed).</summary>
    public static readonly StudioGrant Ended = new("an ended session", null, StudioPermissions.None);
}
