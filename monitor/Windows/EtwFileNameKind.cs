namespace Diagnostics.Monitor.Windows;

/// <summary>Which FileIo name event named a file key (DiskFileIO keyword).</summary>
public enum EtwFileNameKind : byte
{
    /// <summary>FileIo/Name: a name the kernel logged as it met the file.</summary>
    Name,
    /// <summary>FileIo/FileCreate: a file object for this name was created.</summary>
    Create,
    /// <summary>FileIo/FileRundown: the names of files open when the session was started or stopped.</summary>
    Rundown,
    /// <summary>FileIo/FileDelete: the key goes away and may be reused for another file.</summary>
    Delete,
}
