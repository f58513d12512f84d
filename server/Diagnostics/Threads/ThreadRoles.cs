namespace Diagnostics.Server.Diagnostics.Threads;

/// <summary>
/// What a thread is for, from its name. The server names every thread it starts; the runtime
/// names its own (Linux shows at most 15 characters of them). Known by name rather than
/// registered, so threads the server never touched (the GC's, the finalizer) get a role too.
/// </summary>
public static class ThreadRoles
{
    private static readonly (string Prefix, string Role)[] ByPrefix =
    [
        ("main", "main (start, load, shutdown)"),
        ("shard executor", "shard executor"),
        ("shard cron", "shard cron (expiry, rehash)"),
        ("aof writer", "AOF writer"),
        ("aof fsync", "AOF fsync"),
        ("aof rewrite", "AOF rewrite"),
        ("lazyfree", "lazy free"),
        ("sampler", "diagnostics sampler"),
        (".NET SocketEngine", "network I/O and commands"),
        (".NET Sockets", "network I/O and commands"),
        (".NET ThreadPool Worker", "thread pool (HTTP, timers, commands)"),
        (".NET TP Worker", "thread pool (HTTP, timers, commands)"),
        (".NET Long Running Task", "long-running task"),
        (".NET Long Runni", "long-running task"),
        (".NET Timer", "runtime timer"),
        (".NET Finalizer", "runtime finalizer"),
        (".NET BGC", "garbage collector"),
        (".NET Server GC", "garbage collector"),
        (".NET SigHandler", "signal handler"),
        (".NET Tiered Compilation Worker", "JIT (tiered compilation)"),
        (".NET Tiered Com", "JIT (tiered compilation)"),
        (".NET EventPipe", "runtime diagnostics (EventPipe)"),
        (".NET DebugPipe", "runtime diagnostics"),
        (".NET Debugger", "runtime diagnostics"),
        (".NET SynchManager", "runtime wait manager"),
        (".NET Counter Poller", "runtime counters"),
        (".NET TP Gate", "thread pool (injection gate)"),
        ("Console logger", "console log writer"),
        ("Kestrel Timer", "HTTP (Kestrel timer)"),
    ];

    public static string Of(string name, int osThreadId = 0)
    {
        // The process's first thread carries the executable's name ("dotnet") at the OS level.
        if (osThreadId == Environment.ProcessId)
            return "main (start, load, shutdown)";
        foreach (var (prefix, role) in ByPrefix)
            if (name.StartsWith(prefix, StringComparison.Ordinal))
                return prefix == "shard executor" ? "shard executor" + name[prefix.Length..] : role;
        return "other";
    }
}
