using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// max-waiting-commands: commands for several shards that find one held wait on a thread; past the
/// limit, once those waits have stalled, the next is refused at once with TOOBUSY (an EXEC is
/// discarded, as Redis discards a refused EXEC), counted by client and in the stats, and the
/// waiting ones still run. Ordinary contention, whose waits keep ending, is never refused.
/// </summary>
public sealed class TooBusyTests
{
    private const string TooBusy = "TOOBUSY the server is too busy: 1 commands already wait for shards that other commands hold (max-waiting-commands); refused instead of queued, try again shortly";

    [Fact]
    public void PastTheLimitCommandsAreRefusedAtOnceAndTheWaitingOneRuns()
    {
        using var server = ServerProcess.Start("--max-waiting-commands", "1");
        using var sleeper = server.Connect();
        using var waiter = server.Connect();
        using var refused = server.Connect();
        using var transaction = server.Connect();
        using var observer = server.Connect();
        long refusedId = refused.Call("CLIENT", "ID").Integer;
        long transactionId = transaction.Call("CLIENT", "ID").Integer;

        using var api = new ApiClient(server.HttpPort);
        int minWorkers = api.Get("/api/runtime", ContractsJson.Default.RuntimeReport).ThreadPoolMinWorkers;

        // DEBUG SLEEP holds every shard; one MSET waits for them on a thread.
        sleeper.Send("DEBUG", "SLEEP", "3");
        Poll.Until(() => observer.Call("CLIENT", "LIST").Text!.Contains("cmd=debug"), "DEBUG SLEEP running");
        // Six keys: the shard a key maps to is seeded per process, and six in one shard of 16 are
        // as good as impossible.
        waiter.Send("MSET", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5", "f", "6");
        Poll.Until(() => InfoFields.GetInt64(observer, "stats", "waiting_commands") == 1, "the MSET waiting");
        // The pool is given a thread for the one it waits on.
        Assert.Equal(minWorkers + 1, api.Get("/api/runtime", ContractsJson.Default.RuntimeReport).ThreadPoolMinWorkers);

        // Once no wait has ended for the stall time (the waiting MSET is held up, not moving), the
        // next is refused, without waiting for the sleep.
        Thread.Sleep(2 * Engine.ShardWaitLimit.StallMs);
        var clock = System.Diagnostics.Stopwatch.StartNew();
        RespAssert.Error(TooBusy, refused.Call("MSET", "g", "7", "h", "8", "i", "9", "j", "10", "k", "11", "l", "12"));
        Assert.True(clock.ElapsedMilliseconds < 1000, $"the refusal took {clock.ElapsedMilliseconds} ms");
        // A refused EXEC discards its transaction, as Redis's rejectCommand does.
        RespAssert.Ok(transaction.Call("MULTI"));
        Assert.Equal("QUEUED", transaction.Call("MSET", "g", "7", "h", "8", "i", "9", "j", "10", "k", "11", "l", "12").Text);
        RespAssert.Error("EXECABORT Transaction discarded because of: " + TooBusy, transaction.Call("EXEC"));
        RespAssert.Error("ERR EXEC without MULTI", transaction.Call("EXEC"));
        // A single-shard command queues behind the sleep as in Redis, holding no thread: never refused.
        using var reader = server.Connect();
        reader.Send("GET", "a");
        Assert.Equal(1, InfoFields.GetInt64(observer, "stats", "waiting_commands"));

        RespAssert.Ok(sleeper.Read());
        RespAssert.Ok(waiter.Read());
        Assert.False(reader.Read().IsError);
        Assert.Equal("1", waiter.Call("GET", "a").Text);
        Assert.True(refused.Call("EXISTS", "g", "h", "i", "j", "k", "l").Integer == 0, "nothing refused was written");
        Assert.Equal(0, InfoFields.GetInt64(observer, "stats", "waiting_commands"));
        Assert.Equal(minWorkers, api.Get("/api/runtime", ContractsJson.Default.RuntimeReport).ThreadPoolMinWorkers);
        Assert.Equal(2, InfoFields.GetInt64(observer, "stats", "toobusy_rejected_calls"));
        // The error stats count replies by their code, as Redis's: the EXEC's is EXECABORT.
        Assert.Equal("count=1", InfoFields.Get(observer, "errorstats", "errorstat_TOOBUSY"));
        Assert.Equal("count=1", InfoFields.Get(observer, "errorstats", "errorstat_EXECABORT"));
        Assert.Contains("rejected_calls=1", InfoFields.Get(observer, "commandstats", "cmdstat_mset"));
        Assert.Contains("rejected_calls=1", InfoFields.Get(observer, "commandstats", "cmdstat_exec"));
        var clients = api.Get("/api/clients", ContractsJson.Default.ClientSnapshotArray);
        Assert.Equal(1, clients.Single(x => x.Id == refusedId).TooBusyRefusals);
        Assert.Equal(1, clients.Single(x => x.Id == transactionId).TooBusyRefusals);
    }

    [Fact]
    public void PipelinedMsetsContendingForShardsAreNeverRefused()
    {
        // As redis-benchmark's MSET test at -P 30: 50 clients pipelining MSETs of keys all over
        // the shards, under the shipped limit. Their waits pass it (refused by the limit alone in
        // about one run of two, here and in the benchmark), and keep ending: contention, not a
        // stall. Fewer clients than the hard limit, so only a stall could refuse one.
        const int Clients = 50;
        const int Pipelines = 60;
        const int PerPipeline = 30;
        Assert.True(Clients < Engine.ShardWaitLimit.DefaultLimit * Engine.ShardWaitLimit.HardLimitFactor);
        using var server = ServerProcess.Start();
        var errors = new System.Collections.Concurrent.ConcurrentQueue<string>();
        var writers = new Thread[Clients];
        for (int c = 0; c < Clients; c++)
        {
            int client = c;
            writers[c] = new Thread(() =>
            {
                using var connection = server.Connect();
                var pipeline = new string[PerPipeline][];
                for (int p = 0; p < Pipelines; p++)
                {
                    for (int i = 0; i < PerPipeline; i++)
                    {
                        var mset = new string[21];
                        mset[0] = "MSET";
                        for (int k = 0; k < 10; k++)
                        {
                            mset[1 + 2 * k] = $"c{client}:{k}:{i}";
                            mset[2 + 2 * k] = p.ToString();
                        }
                        pipeline[i] = mset;
                    }
                    connection.SendRaw(RespClient.EncodeAll(pipeline));
                    for (int i = 0; i < PerPipeline; i++)
                        if (connection.Read() is { IsError: true } error)
                            errors.Enqueue(error.Text!);
                }
            }) { IsBackground = true, Name = $"mset writer {c}" };
            writers[c].Start();
        }
        foreach (var writer in writers)
            Assert.True(writer.Join(120_000), "a writer did not finish within 120 s");

        Assert.True(errors.IsEmpty, $"{errors.Count} MSETs refused, the first: {(errors.TryPeek(out var first) ? first : "")}");
        using var observer = server.Connect();
        Assert.Equal(0, InfoFields.GetInt64(observer, "stats", "toobusy_rejected_calls"));
        Assert.Equal((Pipelines - 1).ToString(), observer.Call("GET", $"c{Clients - 1}:9:{PerPipeline - 1}").Text);
    }

    [Fact]
    public void ZeroLiftsTheLimitAndTheSettingIsChecked()
    {
        using var server = ServerProcess.Start();
        using var c = server.Connect();
        Assert.Equal("16", c.Call("CONFIG", "GET", "max-waiting-commands").Array[1].Text);
        RespAssert.Ok(c.Call("CONFIG", "SET", "max-waiting-commands", "0"));
        Assert.StartsWith("ERR CONFIG SET failed", c.Call("CONFIG", "SET", "max-waiting-commands", "-1").Text);

        using var sleeper = server.Connect();
        sleeper.Send("DEBUG", "SLEEP", "1");
        Poll.Until(() => c.Call("CLIENT", "LIST").Text!.Contains("cmd=debug"), "DEBUG SLEEP running");
        var writers = new List<RespClient>();
        for (int i = 0; i < 3; i++)
        {
            var writer = server.Connect();
            writer.Send("MSET", $"w{i}:a", "1", $"w{i}:b", "2", $"w{i}:c", "3", $"w{i}:d", "4", $"w{i}:e", "5", $"w{i}:f", "6");
            writers.Add(writer);
        }
        Poll.Until(() => InfoFields.GetInt64(c, "stats", "waiting_commands") == 3, "three MSETs waiting");
        RespAssert.Ok(sleeper.Read());
        foreach (var writer in writers)
        {
            RespAssert.Ok(writer.Read());
            writer.Dispose();
        }
        Assert.Equal(0, InfoFields.GetInt64(c, "stats", "toobusy_rejected_calls"));
    }
}
