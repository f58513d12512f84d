namespace Diagnostics.Server.Network;

/// <summary>CLIENT REPLY: whether the server answers this client's commands.</summary>
public enum ReplyMode
{
    On,
    Off,
    Skip,
}
