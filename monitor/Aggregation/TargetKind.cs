namespace Diagnostics.Monitor.Aggregation;

public enum TargetKind : byte
{
    File,
    Socket,
    Pipe,
    Device,
    Other,
}
