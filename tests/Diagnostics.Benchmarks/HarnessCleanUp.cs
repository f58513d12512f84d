namespace Diagnostics.Benchmarks;

/// <summary>
/// Stops every server and then deletes every scratch directory (servers first: they own
/// directories and must not be writing into them). Runs from a signal handler beside the main
/// thread and again when the main thread finishes: the second call waits for the first, so the
/// process never exits half-way through a deletion.
/// </summary>
public static class HarnessCleanUp
{
    private static readonly Lock Gate = new();
    private static volatile bool _interrupted;

    /// <summary>True once a signal asked the harness to stop: whatever the main thread then fails on is that, not a bug.</summary>
    public static bool Interrupted => _interrupted;

    public static void OnSignal()
    {
        _interrupted = true;
        Run();
    }

    public static void Run()
    {
        lock (Gate)
        {
            ServerUnderTest.StopAll();
            ScratchDirectory.DeleteAll();
        }
    }
}
