namespace Diagnostics.Server.Api.Access;

/// <summary>What a request must present to reach an endpoint; every endpoint declares one (<see cref="RequiredCredentialMetadata"/>).</summary>
public enum HttpCredential
{
    /// <summary>Nothing: the login page and static files, which hold no data.</summary>
    None,
    /// <summary>
    /// The operator's: the API key, the requirepass password or a studio session, whenever the
    /// server is exposed or has either secret; a loopback server with neither stays open.
    /// </summary>
    Operator,
    /// <summary>The monitor's token from the announcement file, and only that.</summary>
    MonitorToken,
}
