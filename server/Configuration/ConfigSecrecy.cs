namespace Diagnostics.Server.Configuration;

/// <summary>Who may see a setting's value.</summary>
public enum ConfigSecrecy
{
    /// <summary>Shown wherever settings are shown.</summary>
    Public,

    /// <summary>
    /// A Redis password (requirepass, masterauth; Redis's SENSITIVE_CONFIG): CONFIG GET answers it
    /// to a client allowed to run CONFIG, as Redis does, since that client could set it anyway;
    /// everywhere else (a command's arguments in the slow log, the HTTP API, the debug package)
    /// it is <see cref="Redaction.Marker"/>.
    /// </summary>
    Sensitive,

    /// <summary>
    /// A credential of this server that Redis does not have (http-api-key): redacted as
    /// <see cref="Sensitive"/>, and in CONFIG GET too, so a RESP client (a monitoring tool that
    /// dumps CONFIG GET *, say) never carries the key that opens the HTTP API.
    /// </summary>
    Credential,
}
