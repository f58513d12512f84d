namespace Diagnostics.Server.Api.Access;

/// <summary>What a request must present to reach an endpoint; every endpoint declares one (<see cref="RequiredCredentialMetadata"/>).</summary>
public enum HttpCredential
{
    /// <summary>Nothing: the login page and static files, which hold no data.</summary>
    None,
    /// <summary>
    /// A login (<see cref="HttpLogins"/>): an ACL user, the API key or the default user's password,
    /// or a studio session, whenever the server is exposed, has a key or a default user with a
    /// password; a loopback server with none of these acts as the default user. What the login may
    /// then do is the endpoint's <see cref="RequiredPermissionMetadata"/>.
    /// </summary>
    Operator,
    /// <summary>The monitor's token from the announcement file, and only that.</summary>
    MonitorToken,
}
