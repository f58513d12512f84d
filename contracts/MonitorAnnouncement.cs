namespace Diagnostics.Contracts;

/// <summary>
/// What a server writes at start for a monitor to find it: its pid and ports, where to push, the
/// token that push must present, and its data directory (whose disk the monitor watches). The
/// file is readable by the server's user and root only, since the token is in it.
/// </summary>
public sealed record MonitorAnnouncement(int Pid, int Port, string IngestUrl, string Token, string DataDirectory)
{
    /// <summary>The header that carries the token on every push.</summary>
    public const string TokenHeader = "X-Monitor-Token";
    public const string IngestPath = "/api/monitor/ingest";
    public const string DirectoryName = "diagnostics-server";
}
