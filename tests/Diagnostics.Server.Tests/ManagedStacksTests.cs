using System.Diagnostics;
using System.Runtime.CompilerServices;
using Diagnostics.Server.Diagnostics.Stacks;
using Diagnostics.Server.Memory;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// ManagedStacks.CaptureAsync samples the managed stacks of every thread of the process it runs
/// in. It runs inside the server, so it is tested inside this test process, which it samples the
/// same way: a thread parked in a uniquely named method must show up with that frame, the work
/// files must be gone afterwards, and a capture that cannot use the diagnostics IPC must say why
/// and fall back to the OS thread list instead of throwing.
/// </summary>
public sealed class ManagedStacksTests
{
    private const string ParkedThreadName = "stacks-parked";

    [Fact]
    public async Task ReportsTheParkedThreadWithItsUniquelyNamedFrame()
    {
        using var work = new TempDirectory("stacks-test-");
        using var parked = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        int parkedThreadId = 0;
        var thread = new Thread(() =>
        {
            parkedThreadId = OsThread.CurrentId();
            ParkedInsideUniquelyNamedFrameForStacksTest(parked, release);
        })
        { IsBackground = true, Name = ParkedThreadName };
        thread.Start();
        try
        {
            Assert.True(parked.Wait(TimeSpan.FromSeconds(30)), "the parked thread did not start");

            var clock = Stopwatch.StartNew();
            string report = await ManagedStacks.CaptureAsync(new ManagedStacksOptions { TempRoot = work.Path }, CancellationToken.None);
            TimeSpan took = clock.Elapsed;

            Assert.StartsWith($"# Managed stacks of all threads of process {Environment.ProcessId}, captured ", report);
            string block = ThreadBlock(report, parkedThreadId);
            Assert.Contains($"\"{ParkedThreadName}\"", block.Split('\n')[0]);
            Assert.Contains($"{nameof(ManagedStacksTests)}.{nameof(ParkedInsideUniquelyNamedFrameForStacksTest)}", block);
            Assert.Contains("Diagnostics.Server.Tests!", block);
            // The leaf is the wait itself, the parked method below it: frames go innermost first.
            Assert.True(block.IndexOf("ManualResetEventSlim.Wait", StringComparison.Ordinal)
                < block.IndexOf(nameof(ParkedInsideUniquelyNamedFrameForStacksTest), StringComparison.Ordinal), block);

            // A sanity bound (a hung session or rundown), not a speed assertion.
            Assert.True(took < TimeSpan.FromSeconds(15), $"the capture took {took}");
            Assert.Empty(Directory.EnumerateFileSystemEntries(work.Path));
        }
        finally
        {
            release.Set();
            thread.Join();
        }
    }

    [Fact]
    public async Task WithoutDiagnosticsIpcReportsWhyAndFallsBackToTheOsThreadList()
    {
        using var work = new TempDirectory("stacks-test-");
        // A live process that is not .NET has no diagnostics IPC endpoint, just as a server
        // started with DOTNET_EnableDiagnostics=0 has none.
        using var sleeper = Process.Start(new ProcessStartInfo("sleep", "60") { UseShellExecute = false })!;
        try
        {
            string report = await ManagedStacks.CaptureAsync(
                new ManagedStacksOptions { ProcessId = sleeper.Id, TempRoot = work.Path }, CancellationToken.None);

            Assert.StartsWith($"# Managed stacks of all threads of process {sleeper.Id}: NOT captured", report);
            Assert.Contains("# Tried: an EventPipe session on the process's own diagnostics IPC", report);
            Assert.Contains("# Why it failed: ServerNotAvailableException", report);
            // The fallback lists this process's threads from the OS: the main thread's id is the pid.
            Assert.Contains("/proc/self/task", report);
            Assert.Contains($"\nThread {Environment.ProcessId} (0x{Environment.ProcessId:X})", report);
            Assert.Contains("# Stack of the capturing thread (System.Diagnostics.StackTrace):", report);
            Assert.Contains(nameof(ManagedStacks.CaptureAsync), report);
            Assert.Empty(Directory.EnumerateFileSystemEntries(work.Path));
        }
        finally
        {
            sleeper.Kill();
            sleeper.WaitForExit();
        }
    }

    [Fact]
    public async Task ACancelledCaptureReturnsAReportInsteadOfThrowing()
    {
        using var work = new TempDirectory("stacks-test-");
        string report = await ManagedStacks.CaptureAsync(
            new ManagedStacksOptions { TempRoot = work.Path }, new CancellationToken(canceled: true));

        Assert.Contains(": NOT captured", report.Split('\n')[0]);
        Assert.Contains("# Why it failed: the caller cancelled the capture", report);
        Assert.Empty(Directory.EnumerateFileSystemEntries(work.Path));
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ParkedInsideUniquelyNamedFrameForStacksTest(ManualResetEventSlim parked, ManualResetEventSlim release)
    {
        parked.Set();
        release.Wait();
    }

    /// <summary>The report's block for one thread: its "Thread id (0x..)" line and its frames.</summary>
    private static string ThreadBlock(string report, int threadId)
    {
        string header = $"\nThread {threadId} (0x{threadId:X})";
        int start = report.IndexOf(header, StringComparison.Ordinal);
        Assert.True(start >= 0, $"thread {threadId} is missing from the report:\n{report}");
        int end = report.IndexOf("\n\n", start + 1, StringComparison.Ordinal);
        return report[(start + 1)..(end < 0 ? report.Length : end)];
    }
}
