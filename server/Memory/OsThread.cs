using System.Runtime.InteropServices;

namespace Diagnostics.Server.Memory;

/// <summary>The operating system's id of the calling thread (what top, /proc and ETW show).</summary>
internal static partial class OsThread
{
    public static int CurrentId()
    {
        if (OperatingSystem.IsLinux())
            return LinuxGetTid();
        if (OperatingSystem.IsWindows())
            return (int)WindowsGetCurrentThreadId();
        return Environment.CurrentManagedThreadId;
    }

    /// <summary>A thread's name for reports: its own, or what kind of unnamed thread it is.</summary>
    public static string NameOf(Thread thread) =>
        thread.Name ?? (thread.IsThreadPoolThread ? ".NET ThreadPool Worker" : $"thread {thread.ManagedThreadId}");

    [LibraryImport("libc", EntryPoint = "gettid")]
    private static partial int LinuxGetTid();

    [LibraryImport("kernel32", EntryPoint = "GetCurrentThreadId")]
    private static partial uint WindowsGetCurrentThreadId();
}
