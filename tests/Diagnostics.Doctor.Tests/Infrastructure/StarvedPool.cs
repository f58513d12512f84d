using System.Collections.Concurrent;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// Thread-pool starvation as an operator meets it: one client runs DEBUG SLEEP 0.6 back to back
/// (it holds every shard, as in Redis) while 32 clients' MSETs over several shards wait behind it,
/// each on a pool thread, and the runtime adds threads slower than work arrives. Runs until
/// disposed (at most <see cref="MaxSleeps"/> sleeps); disposing waits for every client to finish
/// and fails if any got an error. The pool starves only on a server started with
/// max-waiting-commands 0 (<see cref="NoWaitLimit"/>); under a limit the MSETs past it, stalled
/// behind the sleep, are refused with TOOBUSY, which <paramref name="tooBusyExpected"/> accepts
/// (and counts). Under the shipped limit (16) all 32 may wait: they are within its hard limit.
/// </summary>
public sealed class StarvedPool : IDisposable
{
    public const int MaxSleeps = 60;
    /// <summary>The server arguments that let waits for shards pile up on the pool unbounded.</summary>
    public static readonly string[] NoWaitLimit = ["--max-waiting-commands", "0"];
    private long _tooBusy;
    private readonly ConcurrentQueue<string> _failures = new();
    private readonly CancellationTokenSource _done = new();
    private readonly CancellationTokenSource _stop = new();
    private readonly Thread _sleeper;
    private readonly Thread[] _writers = new Thread[32];

    /// <summary>MSETs refused with TOOBUSY so far.</summary>
    public long TooBusyRefusals => Interlocked.Read(ref _tooBusy);

    /// <summary>The first TOOBUSY refusal's text, or null.</summary>
    public string? TooBusyError { get; private set; }

    public StarvedPool(ServerProcess server, string sleeperName = "doctor-sleeper", bool tooBusyExpected = false)
    {
        _sleeper = new Thread(() =>
        {
            using var c = server.Connect();
            RespAssert.Ok(c.Call("CLIENT", "SETNAME", sleeperName));
            for (int i = 0; i < MaxSleeps && !_stop.IsCancellationRequested; i++)
            {
                var reply = c.Call("DEBUG", "SLEEP", "0.6");
                if (reply.Text != "OK")
                    _failures.Enqueue(reply.ToString());
            }
            _done.Cancel();
        }) { IsBackground = true };
        for (int i = 0; i < _writers.Length; i++)
        {
            string prefix = "w" + i + ":";
            _writers[i] = new Thread(() =>
            {
                using var c = server.Connect();
                while (!_done.IsCancellationRequested)
                {
                    var reply = c.Call("MSET", prefix + "a", "1", prefix + "b", "2", prefix + "c", "3", prefix + "d", "4");
                    if (tooBusyExpected && reply.IsError && reply.Text!.StartsWith("TOOBUSY ", StringComparison.Ordinal))
                    {
                        TooBusyError ??= reply.Text;
                        Interlocked.Increment(ref _tooBusy);
                        Thread.Sleep(50); // a client told to try again shortly backs off a little
                    }
                    else if (reply.Text != "OK")
                    {
                        _failures.Enqueue(reply.ToString());
                    }
                }
            }) { IsBackground = true };
        }
        _sleeper.Start();
        foreach (var writer in _writers)
            writer.Start();
    }

    public void Dispose()
    {
        _stop.Cancel();
        Assert.True(_sleeper.Join(90_000), "the DEBUG SLEEP client did not finish within 90 s");
        foreach (var writer in _writers)
            Assert.True(writer.Join(60_000), "an MSET client did not finish within a minute");
        Assert.Empty(_failures);
        _done.Dispose();
        _stop.Dispose();
    }
}
