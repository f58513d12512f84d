using System.Diagnostics;
using System.Globalization;
using Diagnostics.Server.Memory;

namespace Diagnostics.Benchmarks;

/// <summary>
/// The tracked allocator alone, in this process, from two threads at once: each allocates a batch
/// of 64 blocks of 16 to 512 bytes and frees it again ("own": every free on the owning thread),
/// or hands its batch to the other thread through a shared slot and frees the batch it gets back
/// ("exchange": about every free on another thread, the remote path). Reports nanoseconds per
/// allocation plus its free, per thread, the best of several passes.
/// Run in a child process per backend (<c>Diagnostics.Benchmarks allocator-micro &lt;backend&gt;</c>),
/// so jemalloc can be given the static TLS it needs at process start.
/// </summary>
public static unsafe class AllocatorMicrobenchmark
{
    private const int Batch = 64;
    private const int BatchesPerPass = 40_000;
    private const int Passes = 5;

    public static int Run(string backend)
    {
#if !BEFORE_BATCHING
        var choice = Enum.Parse<AllocatorChoice>(backend, ignoreCase: true);
        var opened = AllocatorBackend.Open(choice, out string? problem);
        if (problem is not null)
        {
            Console.Error.WriteLine(problem);
            return 1;
        }
        TrackedAllocator.Use(opened);
        string name = opened.Name;
#else
        string name = "libc (before batching)";
#endif
        double own = Best(exchange: false), exchange = Best(exchange: true);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{name}\t{own:0.0}\t{exchange:0.0}"));
        return 0;
    }

    private static double Best(bool exchange)
    {
        double best = double.MaxValue;
        for (int pass = 0; pass < Passes; pass++)
            best = Math.Min(best, Pass(exchange));
        return best;
    }

    /// <summary>Nanoseconds per allocation and free, per thread, for one pass of both threads.</summary>
    private static double Pass(bool exchange)
    {
        nint shared = 0;
        using var start = new Barrier(2);
        double elapsed = 0;
        var threads = new Thread[2];
        for (int t = 0; t < 2; t++)
        {
            int seed = t;
            threads[t] = new Thread(() =>
            {
                nint* mine = stackalloc nint[Batch];
                uint state = (uint)seed * 2654435761u + 1;
                start.SignalAndWait();
                long began = Stopwatch.GetTimestamp();
                for (int b = 0; b < BatchesPerPass; b++)
                {
                    nint* blocks = (nint*)TrackedAllocator.Alloc((nuint)(Batch * sizeof(nint)));
                    for (int i = 0; i < Batch; i++)
                    {
                        state = state * 1664525u + 1013904223u;
                        blocks[i] = (nint)TrackedAllocator.Alloc(16 + (state >> 23)); // 16..527 bytes
                    }
                    nint toFree = exchange ? Interlocked.Exchange(ref shared, (nint)blocks) : (nint)blocks;
                    if (toFree != 0)
                        FreeBatch((nint*)toFree);
                }
                double ns = Stopwatch.GetElapsedTime(began).TotalNanoseconds / (BatchesPerPass * (Batch + 1.0));
                lock (threads)
                    elapsed = Math.Max(elapsed, ns);
            });
            threads[t].Start();
        }
        foreach (var thread in threads)
            thread.Join();
        if (shared != 0)
            FreeBatch((nint*)shared);
        return elapsed;
    }

    private static void FreeBatch(nint* blocks)
    {
        for (int i = 0; i < Batch; i++)
            TrackedAllocator.Free((byte*)blocks[i]);
        TrackedAllocator.Free((byte*)blocks);
    }
}
