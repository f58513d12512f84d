namespace Diagnostics.Server.Replication;

/// <summary>Where a replica's link to its master is, as Redis's repl_state (ROLE shows the names).</summary>
public enum MasterLinkState
{
    /// <summary>Not connected; the next attempt comes within a second ("connect").</summary>
    Connect,
    /// <summary>Making the TCP connection ("connecting").</summary>
    Connecting,
    /// <summary>Connected, in the handshake up to PSYNC's answer ("handshake").</summary>
    Handshake,
    /// <summary>Receiving and loading the master's RDB ("sync").</summary>
    Transfer,
    /// <summary>Applying the master's command stream ("connected").</summary>
    Connected,
}
