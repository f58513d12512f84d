namespace Diagnostics.Studio.Sources;

/// <summary>The changes the studio can make to a live server. Who may call them is decided before (the login when exposed).</summary>
public interface IServerControl
{
    /// <summary>Closes the client's connection as CLIENT KILL ID does; false when no such client is connected.</summary>
    bool KillClient(long id);
}
