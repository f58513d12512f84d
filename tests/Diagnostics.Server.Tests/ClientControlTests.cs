using System.Diagnostics;
using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// CLIENT PAUSE/UNPAUSE and client-side caching (CLIENT TRACKING, CACHING, GETREDIR,
/// TRACKINGINFO) side by side with the real redis-server: each scenario runs against both and
/// records what the clients see (replies, pushes, pub/sub messages, CLIENT LIST and INFO fields,
/// error texts, and which commands are held); the two transcripts must be equal.
/// </summary>
public sealed class ClientControlTests
{
    private const int HeldMs = 300;

    /// <summary>Runs <paramref name="scenario"/> on both servers and compares what it recorded.</summary>
    private static List<string> SideBySide(Action<Func<RespClient>, List<string>> scenario)
    {
        var transcripts = new List<List<string>>();
        foreach (var target in new[] { "redis-server", "diagnostics-server" })
        {
            var (server, connect) = ServerTarget.Start(target);
            using var _ = server;
            var transcript = new List<string>();
            scenario(connect, transcript);
            transcripts.Add(transcript);
        }
        Assert.Equal(transcripts[0], transcripts[1]);
        return transcripts[1];
    }

    private static string Show(RespValue value) => RespValue.Render([value]).TrimEnd('\n');

    private static RespClient Named(Func<RespClient> connect, string name, int protocol = 2)
    {
        var client = connect();
        if (protocol == 3)
            Assert.Equal('%', client.Call("HELLO", "3").Kind);
        RespAssert.Ok(client.Call("CLIENT", "SETNAME", name));
        return client;
    }

    /// <summary>The CLIENT LIST fields that describe pausing and tracking, with the redirect id made relative.</summary>
    private static string ListFields(RespClient control, string name, long redirectTo = -2)
    {
        var fields = ClientListFields.Of(control, name)!;
        string redir = fields["redir"] == redirectTo.ToString() ? "<target>" : fields["redir"];
        return $"{name}: flags={fields["flags"]} cmd={fields["cmd"]} redir={redir}";
    }

    [Fact]
    public void PauseWriteHoldsWritesAndWhatMayReplicateLetsReadsThroughAndUnpauseReleasesInOrder()
    {
        var transcript = SideBySide((connect, t) =>
        {
            using var admin = Named(connect, "admin");
            using var writer = Named(connect, "writer");
            using var publisher = Named(connect, "publisher");
            using var reader = Named(connect, "reader");
            t.Add(Show(admin.Call("CLIENT", "PAUSE", "100000", "WRITE")));
            t.Add("get: " + Show(reader.Call("GET", "k")));
            // A pipeline: the SET waits, and the GET behind it waits for it, in order.
            writer.SendRaw(RespClient.EncodeAll(["SET", "k", "1"], ["GET", "k"]));
            publisher.Send("PUBLISH", "channel", "message");
            t.Add("set held: " + writer.SilentFor(HeldMs));
            t.Add("publish held: " + publisher.SilentFor(0));
            t.Add("reads go on: " + Show(reader.Call("EXISTS", "k")));
            t.Add(ListFields(admin, "writer"));
            t.Add(ListFields(admin, "publisher"));
            t.Add(ListFields(admin, "reader"));
            t.Add("blocked_clients:" + InfoFields.Get(admin, "clients", "blocked_clients"));
            // Inside MULTI a write waits before it is even queued; a read-only EXEC runs.
            RespAssert.Ok(reader.Call("MULTI"));
            t.Add("queued: " + Show(reader.Call("GET", "k")));
            t.Add("exec: " + Show(reader.Call("EXEC")));
            t.Add(Show(admin.Call("CLIENT", "UNPAUSE")));
            t.Add("set: " + Show(writer.Read()) + " then get: " + Show(writer.Read()));
            t.Add("publish: " + Show(publisher.Read()));
            t.Add(ListFields(admin, "writer"));
            t.Add("blocked_clients:" + InfoFields.Get(admin, "clients", "blocked_clients"));
        });
        Assert.Contains("set held: True", transcript);
        Assert.Contains("writer: flags=b cmd=set redir=-1", transcript);
        Assert.Contains("blocked_clients:2", transcript);
        Assert.Contains("set: +OK then get: $1", transcript);
    }

    [Fact]
    public void PauseAllHoldsEveryCommandUntilItsTimeout()
    {
        var transcript = SideBySide((connect, t) =>
        {
            using var admin = Named(connect, "admin");
            using var reader = Named(connect, "reader");
            var paused = Stopwatch.StartNew();
            t.Add(Show(admin.Call("CLIENT", "PAUSE", "1000")));
            reader.Send("GET", "k");
            admin.Send("CLIENT", "UNPAUSE"); // held too: under ALL, as in Redis, only the timeout ends it
            t.Add("get held: " + reader.SilentFor(HeldMs));
            t.Add("unpause held: " + admin.SilentFor(0));
            // An unknown command and a wrong arity are refused at once, never held.
            using var other = connect();
            t.Add("refused at once: " + Show(other.Call("GET")));
            t.Add("get: " + Show(reader.Read()));
            t.Add("waited for the timeout: " + (paused.ElapsedMilliseconds >= 900));
            t.Add("unpause: " + Show(admin.Read()));
            t.Add("after: " + Show(reader.Call("PING")));
        });
        Assert.Contains("get held: True", transcript);
        Assert.Contains("waited for the timeout: True", transcript);
    }

    [Fact]
    public void ExpiryWaitsWhileWritesArePaused()
    {
        var transcript = SideBySide((connect, t) =>
        {
            using var admin = Named(connect, "admin");
            RespAssert.Ok(admin.Call("SET", "short", "1", "PX", "1000"));
            RespAssert.Ok(admin.Call("CLIENT", "PAUSE", "100000", "WRITE"));
            Thread.Sleep(1500); // past its TTL and several active expiry cycles
            t.Add("get: " + Show(admin.Call("GET", "short")));
            t.Add("still stored: " + Show(admin.Call("DBSIZE")));
            RespAssert.Ok(admin.Call("CLIENT", "UNPAUSE"));
            t.Add("get: " + Show(admin.Call("GET", "short")));
            t.Add("gone: " + Show(admin.Call("DBSIZE")));
        });
        Assert.Contains("still stored: :1", transcript);
    }

    [Fact]
    public void ThePausedServerStaysServiceable()
    {
        using var server = ServerProcess.Start();
        using var admin = server.Connect();
        using var api = new ApiClient(server.HttpPort);
        var held = new List<RespClient>();
        try
        {
            RespAssert.Ok(admin.Call("CLIENT", "PAUSE", "100000", "WRITE"));
            // More held clients than the machine has threads: each waits without one.
            for (int i = 0; i < 4 * Environment.ProcessorCount + 8; i++)
            {
                var client = server.Connect();
                client.Send("SET", $"k{i}", "v");
                held.Add(client);
            }
            Poll.Until(() => InfoFields.GetInt64(admin, "clients", "blocked_clients") == held.Count, "the writers were not all held");
            // The HTTP API answers and shows them, and reads and admin commands go on.
            var clients = api.Get("/api/clients", ContractsJson.Default.ClientSnapshotArray);
            Assert.True(clients.Length >= held.Count + 1);
            using var reader = server.Connect();
            Assert.Equal(0, reader.Call("EXISTS", "k0").Integer);
            RespAssert.Ok(admin.Call("CLIENT", "UNPAUSE"));
            foreach (var client in held)
                RespAssert.Ok(client.Read());
            Assert.Equal(1, reader.Call("EXISTS", "k0").Integer);
        }
        finally
        {
            foreach (var client in held)
                client.Dispose();
        }
    }

    [Fact]
    public void ASecondPauseKeepsTheStrongerModeAndTheLaterEnd()
    {
        SideBySide((connect, t) =>
        {
            using var admin = Named(connect, "admin");
            using var reader = Named(connect, "reader");
            t.Add(Show(admin.Call("CLIENT", "PAUSE", "100000", "WRITE")));
            // ALL for a shorter time: the mode goes up to ALL, the end stays 100 s away.
            t.Add(Show(admin.Call("CLIENT", "PAUSE", "10", "ALL")));
            reader.Send("GET", "k");
            t.Add("get held past the shorter timeout: " + reader.SilentFor(HeldMs));
        });
    }

    [Theory]
    [InlineData(2)]
    [InlineData(3)]
    public void MisusesAnswerRedisErrors(int protocol)
    {
        string[][] commands =
        [
            ["CLIENT", "PAUSE"], ["CLIENT", "PAUSE", "abc"], ["CLIENT", "PAUSE", "-1"], ["CLIENT", "PAUSE", "100", "foo"],
            ["CLIENT", "PAUSE", "abc", "foo"], ["CLIENT", "PAUSE", "100", "write", "extra"], ["CLIENT", "PAUSE", "1.5"],
            ["CLIENT", "UNPAUSE", "x"], ["CLIENT", "TRACKING"], ["CLIENT", "TRACKING", "maybe"], ["CLIENT", "TRACKING", "on", "foo"],
            ["CLIENT", "TRACKING", "on", "optin", "optout"], ["CLIENT", "TRACKING", "on", "prefix", "a"],
            ["CLIENT", "TRACKING", "on", "bcast", "optin"], ["CLIENT", "TRACKING", "on", "redirect", "999999"],
            ["CLIENT", "TRACKING", "on", "redirect", "x"], ["CLIENT", "TRACKING", "on", "bcast", "prefix", "a", "prefix", "ab"],
            ["CLIENT", "CACHING", "yes"], ["CLIENT", "CACHING", "maybe"], ["CLIENT", "CACHING"],
            ["CLIENT", "GETREDIR"], ["CLIENT", "TRACKINGINFO"],
            ["CLIENT", "TRACKING", "on", "optin"], ["CLIENT", "CACHING", "no"], ["CLIENT", "TRACKING", "on", "optout"],
            ["CLIENT", "TRACKING", "on", "bcast"], ["CLIENT", "CACHING", "yes"], ["CLIENT", "TRACKINGINFO"],
            ["CLIENT", "TRACKING", "off"],
            ["CLIENT", "TRACKING", "on", "bcast", "prefix", "a", "prefix", "b", "noloop"],
            ["CLIENT", "TRACKING", "on", "bcast", "prefix", "ab"], ["CLIENT", "TRACKING", "on"],
            ["CLIENT", "TRACKING", "on", "bcast", "prefix", "c"], ["CLIENT", "TRACKINGINFO"], ["CLIENT", "GETREDIR"],
        ];
        var transcript = SideBySide((connect, t) =>
        {
            using var client = Named(connect, "client", protocol);
            foreach (var command in commands)
                t.Add(string.Join(' ', command) + " -> " + Show(client.Call(command)));
        });
        Assert.Contains("CLIENT TRACKING on optin optout -> -ERR You can't specify both OPTIN mode and OPTOUT mode", transcript);
    }

    [Theory]
    [InlineData(2)]
    [InlineData(3)]
    public void DefaultModeInvalidatesWhatTheClientReadWhenAnotherChangesItAndOnFlush(int protocol)
    {
        var transcript = SideBySide((connect, t) =>
        {
            using var tracker = Named(connect, "tracker", 3);
            using var writer = Named(connect, "writer", protocol);
            using var control = connect();
            RespAssert.Ok(tracker.Call("CLIENT", "TRACKING", "ON"));
            t.Add("get: " + Show(tracker.Call("GET", "k")));
            t.Add("mget: " + Show(tracker.Call("MGET", "k", "other")));
            t.Add("tracking_clients:" + InfoFields.Get(control, "clients", "tracking_clients"));
            t.Add("tracking_total_keys:" + InfoFields.Get(control, "stats", "tracking_total_keys"));
            t.Add("tracking_total_items:" + InfoFields.Get(control, "stats", "tracking_total_items"));
            t.Add(ListFields(control, "tracker"));
            RespAssert.Ok(writer.Call("SET", "k", "1"));
            t.Add("push: " + Show(tracker.Read()));
            // Told once: the key is no longer tracked until read again.
            RespAssert.Ok(writer.Call("SET", "k", "2"));
            RespAssert.Ok(writer.Call("SET", "other", "2"));
            t.Add("push: " + Show(tracker.Read()));
            t.Add("tracking_total_keys:" + InfoFields.Get(control, "stats", "tracking_total_keys"));
            // Its own write of a key it read: the reply first, then the invalidation.
            t.Add("get: " + Show(tracker.Call("GET", "k")));
            t.Add("own set: " + Show(tracker.Call("SET", "k", "3")) + " then " + Show(tracker.Read()));
            t.Add("get: " + Show(tracker.Call("GET", "k")));
            RespAssert.Ok(writer.Call("FLUSHALL"));
            t.Add("flush push: " + Show(tracker.Read()));
            t.Add("tracking_total_keys:" + InfoFields.Get(control, "stats", "tracking_total_keys"));
            RespAssert.Ok(tracker.Call("CLIENT", "TRACKING", "OFF"));
            t.Add("get: " + Show(tracker.Call("GET", "k")));
            RespAssert.Ok(writer.Call("SET", "k", "4"));
            t.Add("off: nothing: " + tracker.SilentFor(HeldMs));
            t.Add("tracking_clients:" + InfoFields.Get(control, "clients", "tracking_clients"));
        });
        Assert.Contains("push: >[$invalidate, *[$k]]", transcript);
        Assert.Contains("flush push: >[$invalidate, (null)]", transcript);
        Assert.Contains("tracker: flags=t cmd=mget redir=0", transcript);
    }

    [Fact]
    public void RedirectSendsInvalidationsToARespTwoSubscriberAndBreaksWhenItGoes()
    {
        var transcript = SideBySide((connect, t) =>
        {
            using var target = Named(connect, "target");
            using var tracker = Named(connect, "tracker");
            using var writer = Named(connect, "writer");
            long targetId = target.Call("CLIENT", "ID").Integer;
            t.Add(Show(target.Call("SUBSCRIBE", "__redis__:invalidate")));
            RespAssert.Ok(tracker.Call("CLIENT", "TRACKING", "ON", "REDIRECT", targetId.ToString()));
            t.Add("getredir is the target: " + (tracker.Call("CLIENT", "GETREDIR").Integer == targetId));
            t.Add(ListFields(writer, "tracker", targetId));
            tracker.Call("GET", "x");
            RespAssert.Ok(writer.Call("SET", "x", "1"));
            t.Add("message: " + Show(target.Read()));
            tracker.Call("GET", "x");
            RespAssert.Ok(writer.Call("FLUSHDB"));
            t.Add("flush message: " + Show(target.Read()));
            target.Dispose();
            Poll.Until(() => ClientListFields.Of(writer, "target") is null, "the target never left");
            tracker.Call("GET", "y");
            RespAssert.Ok(writer.Call("SET", "y", "1"));
            var info = tracker.Call("CLIENT", "TRACKINGINFO").Array;
            t.Add("flags: " + Show(info[1]) + " redirect is the target: " + (info[3].Integer == targetId));
            t.Add(ListFields(writer, "tracker", targetId));
        });
        Assert.Contains("tracker: flags=tR cmd=client|trackinginfo redir=<target>", transcript);
    }

    [Fact]
    public void BroadcastSendsForEveryKeyUnderItsPrefixesButNotTheClientsOwnWithNoLoop()
    {
        var transcript = SideBySide((connect, t) =>
        {
            using var tracker = Named(connect, "tracker", 3);
            using var writer = Named(connect, "writer");
            RespAssert.Ok(tracker.Call("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "user:", "PREFIX", "job:", "NOLOOP"));
            t.Add(ListFields(writer, "tracker"));
            t.Add("tracking_total_prefixes:" + InfoFields.Get(writer, "stats", "tracking_total_prefixes"));
            // Never read, still told: BCAST covers every key under the prefixes.
            RespAssert.Ok(writer.Call("SET", "user:1", "x"));
            t.Add("push: " + Show(tracker.Read()));
            RespAssert.Ok(writer.Call("SET", "other", "x"));        // no prefix of its
            RespAssert.Ok(tracker.Call("SET", "user:2", "x"));      // its own write, NOLOOP
            t.Add("del of a missing key: " + Show(writer.Call("DEL", "job:8"))); // nothing deleted: nothing changed
            RespAssert.Ok(writer.Call("SET", "job:9", "x"));
            t.Add("next push: " + Show(tracker.Read()));
            // Several keys of one write: one message per prefix, the keys in byte order.
            RespAssert.Ok(writer.Call("MSET", "user:9", "x", "job:1", "x", "user:10", "x", "other", "x", "user:9", "y"));
            t.Add("mset pushes: " + Show(tracker.Read()) + " " + Show(tracker.Read()));
            t.Add("info: " + Show(tracker.Call("CLIENT", "TRACKINGINFO")));
        });
        Assert.Contains("tracker: flags=tB cmd=client|tracking redir=0", transcript);
    }

    [Fact]
    public void OptInCachesOnlyAfterCachingYesAndOptOutSkipsAfterCachingNo()
    {
        var transcript = SideBySide((connect, t) =>
        {
            using var tracker = Named(connect, "tracker", 3);
            using var writer = Named(connect, "writer");
            RespAssert.Ok(tracker.Call("CLIENT", "TRACKING", "ON", "OPTIN"));
            tracker.Call("GET", "k1");                                   // not remembered
            RespAssert.Ok(tracker.Call("CLIENT", "CACHING", "YES"));
            t.Add("info: " + Show(tracker.Call("CLIENT", "TRACKINGINFO")));
            tracker.Call("GET", "k2");                                   // remembered (CACHING survives CLIENT commands)
            tracker.Call("GET", "k3");                                   // not: CACHING lasted one command
            RespAssert.Ok(writer.Call("MSET", "k1", "1", "k3", "1"));
            RespAssert.Ok(writer.Call("SET", "k2", "1"));
            t.Add("optin push: " + Show(tracker.Read()));

            RespAssert.Ok(tracker.Call("CLIENT", "TRACKING", "OFF"));
            RespAssert.Ok(tracker.Call("CLIENT", "TRACKING", "ON", "OPTOUT"));
            RespAssert.Ok(tracker.Call("CLIENT", "CACHING", "NO"));
            tracker.Call("GET", "k4");                                   // skipped
            tracker.Call("GET", "k5");                                   // remembered
            RespAssert.Ok(writer.Call("SET", "k4", "1"));
            RespAssert.Ok(writer.Call("SET", "k5", "1"));
            t.Add("optout push: " + Show(tracker.Read()));
            t.Add("info: " + Show(tracker.Call("CLIENT", "TRACKINGINFO")));
        });
        Assert.Contains("optin push: >[$invalidate, *[$k2]]", transcript);
        Assert.Contains("optout push: >[$invalidate, *[$k5]]", transcript);
    }

    [Fact]
    public void EvictedKeysAreInvalidatedAndEvictionWaitsWhileWritesArePaused()
    {
        var transcript = SideBySide((connect, t) =>
        {
            using var tracker = Named(connect, "tracker", 3);
            using var writer = Named(connect, "writer");
            RespAssert.Ok(writer.Call("CONFIG", "SET", "maxmemory-policy", "allkeys-random"));
            const int keys = 50;
            for (int i = 0; i < keys; i++)
                RespAssert.Ok(writer.Call("SET", $"k{i}", "value"));
            RespAssert.Ok(tracker.Call("CLIENT", "TRACKING", "ON"));
            for (int i = 0; i < keys; i++)
                tracker.Call("GET", $"k{i}");
            RespAssert.Ok(writer.Call("CLIENT", "PAUSE", "100000", "WRITE"));
            RespAssert.Ok(writer.Call("CONFIG", "SET", "maxmemory", "1"));
            Thread.Sleep(HeldMs); // several eviction cycles
            t.Add("kept while paused: " + Show(writer.Call("DBSIZE")));
            t.Add("nothing sent: " + tracker.SilentFor(0));
            RespAssert.Ok(writer.Call("CLIENT", "UNPAUSE"));
            Poll.Until(() => writer.Call("DBSIZE").Integer == 0, "the keys were not evicted after the pause");
            var invalidated = new SortedSet<string>(StringComparer.Ordinal);
            for (int i = 0; i < keys; i++)
                invalidated.Add(tracker.Read().Array[1].Array[0].Text!);
            t.Add("invalidated: " + string.Join(' ', invalidated));
            RespAssert.Ok(writer.Call("CONFIG", "SET", "maxmemory", "0"));
        });
        Assert.Contains("kept while paused: :50", transcript);
    }

    [Fact]
    public void TheTrackingTableIsChargedToUsedMemory()
    {
        using var server = ServerProcess.Start();
        using var tracker = server.Connect();
        using var control = server.Connect();
        Assert.Equal('%', tracker.Call("HELLO", "3").Kind);
        RespAssert.Ok(tracker.Call("CLIENT", "TRACKING", "ON"));
        long before = InfoFields.GetInt64(control, "memory", "used_memory");
        const int keys = 20_000;
        var reads = new string[keys][];
        for (int i = 0; i < keys; i++)
            reads[i] = ["GET", $"tracked-key:{i:D8}"];
        tracker.SendRaw(RespClient.EncodeAll(reads));
        for (int i = 0; i < keys; i++)
            Assert.True(tracker.Read().IsNull);
        Assert.Equal(keys, InfoFields.GetInt64(control, "stats", "tracking_total_keys"));
        long grown = InfoFields.GetInt64(control, "memory", "used_memory") - before;
        // Each remembered key holds at least its name and one 8-byte client id in tracked memory.
        Assert.InRange(grown, keys * ("tracked-key:00000000".Length + 8L), keys * 200L);
        RespAssert.Ok(control.Call("FLUSHALL"));
        Assert.True(tracker.Read().IsArray); // the flush invalidation
        Assert.Equal(0, InfoFields.GetInt64(control, "stats", "tracking_total_keys"));
        Assert.True(InfoFields.GetInt64(control, "memory", "used_memory") - before < grown / 4, "the flushed table's memory was not given back");
    }

    [Fact]
    public void AnExpiredKeyIsInvalidated()
    {
        var transcript = SideBySide((connect, t) =>
        {
            using var tracker = Named(connect, "tracker", 3);
            using var writer = Named(connect, "writer");
            // Long enough for the read below to find it even on a loaded machine.
            RespAssert.Ok(writer.Call("SET", "short", "1", "PX", "1500"));
            RespAssert.Ok(tracker.Call("CLIENT", "TRACKING", "ON"));
            t.Add("get: " + Show(tracker.Call("GET", "short")));
            // The active expiry cycle deletes it without anyone touching it.
            t.Add("expired push: " + Show(tracker.Read()));
        });
        Assert.Contains("get: $1", transcript);
        Assert.Contains("expired push: >[$invalidate, *[$short]]", transcript);
    }

    [Fact]
    public void ARefusedCommandIsTheLastCommandClientListShows()
    {
        // Redis's processCommand sets lastcmd before its checks: wrong arity, NOAUTH, a refused EXEC.
        var transcript = SideBySide((connect, t) =>
        {
            using var admin = Named(connect, "admin");
            using var client = Named(connect, "refused");
            t.Add(Show(client.Call("SET", "k")));
            t.Add(ListFields(admin, "refused"));
            t.Add(Show(client.Call("GET", "a", "b")));
            t.Add(ListFields(admin, "refused"));
            t.Add(Show(client.Call("NOTACOMMAND")));
            t.Add(ListFields(admin, "refused"));
            t.Add(Show(client.Call("CONFIG")));
            t.Add(ListFields(admin, "refused"));
            t.Add(Show(client.Call("CONFIG", "NOPE")));
            t.Add(ListFields(admin, "refused"));
            RespAssert.Ok(client.Call("MULTI"));
            t.Add(Show(client.Call("SET", "k")));
            t.Add(Show(client.Call("EXEC")));
            t.Add(ListFields(admin, "refused"));
        });
        Assert.Contains("refused: flags=N cmd=set redir=-1", transcript);
        Assert.Contains("refused: flags=N cmd=get redir=-1", transcript);
    }
}
