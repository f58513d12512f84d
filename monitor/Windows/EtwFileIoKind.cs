namespace Diagnostics.Monitor.Windows;

/// <summary>
/// The FileIO start events the kernel logs (FileIoInit keyword), each one IRP that a later
/// OperationEnd closes. <see cref="Other"/> stands for the ones the kernel view has no row for
/// (SetInfo, QueryInfo, FSControl, DirEnum...): they are still paired, so that their ends are
/// not mistaken for losses.
/// </summary>
public enum EtwFileIoKind : byte
{
    Create,
    Read,
    Write,
    Flush,
    Cleanup,
    Close,
    Other,
}
