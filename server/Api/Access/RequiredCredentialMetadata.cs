namespace Diagnostics.Server.Api.Access;

/// <summary>
/// Endpoint metadata: the credential a request needs to reach the endpoint. The gate reads it from
/// the routed endpoint, so how a path is spelled (case, a trailing slash) cannot change the answer,
/// and an endpoint without it is refused to everyone.
/// </summary>
public sealed record RequiredCredentialMetadata(HttpCredential Credential);
