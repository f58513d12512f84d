namespace Diagnostics.Server.Protocol;

public enum ParseStatus
{
    /// <summary>One command was appended to the batch (or an empty line/multibulk was skipped).</summary>
    Parsed,
    /// <summary>The buffer ends inside a command; wait for more input.</summary>
    Incomplete,
    /// <summary>The stream is broken; reply with the error and close the connection.</summary>
    Error,
}
