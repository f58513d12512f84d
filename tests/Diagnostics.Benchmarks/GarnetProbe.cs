using System.Globalization;
using System.Text;

namespace Diagnostics.Benchmarks;

/// <summary>One thing a suite needs from a peer, what Garnet answered when asked, and what the run does about it.</summary>
public sealed record GarnetCapability(string Suite, string Need, string Asked, string Answer, bool Available, string Consequence);

/// <summary>
/// What Garnet can take part in, asked rather than assumed: with --garnet the harness starts one
/// Garnet (as <see cref="ServerUnderTest.StartGarnet"/> does for the suites), sends it what each
/// suite relies on from redis-server (INFO fields, MEMORY USAGE, SCRIPT LOAD, the data-model
/// commands, REPLICAOF, the AOF settings), and starts a second one with --aof --recover on a small
/// Redis 7 AOF to see whether it loads it. The report carries every answer; a suite that does not
/// run Garnet points here for the reason.
/// </summary>
public static class GarnetProbe
{
    private static readonly string[] DataModelCommands = ["XADD", "XREADGROUP", "XACK", "SETBIT", "BITCOUNT", "PFADD", "PFCOUNT", "GEOADD", "GEOSEARCH"];

    public static IReadOnlyList<GarnetCapability> Run(string garnetServer, TextWriter progress)
    {
        progress.WriteLine("garnet: asking a fresh Garnet what each suite needs...");
        var found = new List<GarnetCapability>();
        using (var garnet = ServerUnderTest.StartGarnet(garnetServer))
        using (var connection = garnet.Connect())
        {
            var memory = ServerInfo.Read(connection, "memory");
            bool usedMemory = memory?.ContainsKey(ServerInfo.UsedMemory) == true;
            found.Add(new("memory, datamemory", "used_memory in INFO memory", "INFO memory",
                memory is null ? "no INFO" : usedMemory ? $"used_memory:{memory[ServerInfo.UsedMemory]}" : $"no used_memory field ({memory.Count} fields, e.g. {string.Join(", ", memory.Keys.Take(4))})",
                usedMemory, usedMemory ? "compared" : "used_memory reads n/a; RSS is compared"));

            connection.Call("SET", "probe:string", "value");
            var usage = connection.Call("MEMORY", "USAGE", "probe:string");
            found.Add(new("datamemory", "MEMORY USAGE of a key", "SET probe:string value; MEMORY USAGE probe:string", Show(usage), usage.Kind == ':',
                usage.Kind == ':' ? "reported (Garnet's own accounting)" : "n/a"));
            var encoding = connection.Call("OBJECT", "ENCODING", "probe:string");
            found.Add(new("datamemory", "OBJECT ENCODING of a key", "OBJECT ENCODING probe:string", Show(encoding), encoding.Kind is '$' or '+',
                encoding.Kind is '$' or '+' ? "reported" : "n/a"));

            var script = connection.Call("SCRIPT", "LOAD", ScriptSuite.ReadScript);
            bool lua = script.Kind == '$' && script.Text is { Length: 40 };
            found.Add(new("scripts", "Lua (SCRIPT LOAD, EVALSHA)", $"SCRIPT LOAD \"{ScriptSuite.ReadScript}\" (Garnet started with --lua)", Show(script), lua,
                lua ? "run beside redis-server" : "the scripts suite cannot run Garnet"));

            var known = new List<string>();
            var missing = new List<string>();
            foreach (string command in DataModelCommands)
            {
                var info = connection.Call("COMMAND", "INFO", command.ToLowerInvariant());
                bool has = info.Items is [{ Items: not null }];
                (has ? known : missing).Add(command);
            }
            found.Add(new("datamodel", "streams, consumer groups, bitmaps, HyperLogLogs, geo", $"COMMAND INFO of {string.Join(", ", DataModelCommands)}",
                missing.Count == 0 ? "all known" : $"known: {string.Join(", ", known)}; unknown: {string.Join(", ", missing)}", missing.Count == 0,
                "not run with Garnet: the suite's fills, checks and consumer-group resets are written for two servers"));

            var latency = ServerInfo.Read(connection, "latencystats");
            var commandStats = ServerInfo.Read(connection, "commandstats");
            bool infoStats = latency?.ContainsKey("latency_percentiles_usec_info") == true && commandStats?.ContainsKey("cmdstat_info") == true;
            found.Add(new("info", "INFO latencystats and commandstats (INFO's own time in the server)", "INFO; INFO latencystats; INFO commandstats",
                $"latencystats: {Fields(latency)}; commandstats: {Fields(commandStats)}", infoStats,
                "not run with Garnet: its in-server figures would read n/a (Garnet keeps them only with --latency-monitor and --commandstats-monitor, off as shipped)"));

            var persistence = ServerInfo.Read(connection, "persistence");
            var appendFsync = connection.Call("CONFIG", "GET", "appendfsync");
            bool fsync = appendFsync.Items is { Count: >= 2 };
            found.Add(new("aof-write", "appendonly with appendfsync always / everysec, AOF rewrites (aof_rewrites)", "CONFIG GET appendfsync; INFO persistence",
                $"CONFIG GET appendfsync: {Show(appendFsync)}; INFO persistence: {Fields(persistence)}", fsync && persistence?.ContainsKey("aof_rewrites") == true,
                "not run with Garnet: its AOF is its own log (--aof, --aof-commit-freq), not Redis's policies and rewrites"));

            int nobody = ServerUnderTest.FreePort();
            var replicaOf = connection.Call("REPLICAOF", "127.0.0.1", nobody.ToString(CultureInfo.InvariantCulture));
            found.Add(new("replication", "REPLICAOF on a standalone server", $"REPLICAOF 127.0.0.1 {nobody} (a free port)", Show(replicaOf), !replicaOf.IsError,
                replicaOf.IsError ? "n/a: Garnet refuses REPLICAOF here" : "not run with Garnet"));
            if (!replicaOf.IsError)
                connection.Call("REPLICAOF", "NO", "ONE");
        }

        found.Add(LoadsRedisAof(garnetServer));
        foreach (var capability in found)
            progress.WriteLine($"garnet: {capability.Suite}: {capability.Asked} -> {capability.Answer}");
        return found;
    }

    /// <summary>
    /// Starts Garnet with --aof --recover in a directory (its working directory and --checkpointdir)
    /// holding a small Redis 7 multi-part AOF, as the aof-load suite starts redis-server, and reads
    /// DBSIZE once it answers.
    /// </summary>
    private static GarnetCapability LoadsRedisAof(string garnetServer)
    {
        using var aof = AofGenerator.Generate(256 * 1024);
        var copy = ScratchDirectory.CopyOf(aof.Directory.Path, "diagnostics-bench-garnet-aof-");
        long? size = null;
        string answer;
        try
        {
            using var garnet = ServerUnderTest.StartGarnet(garnetServer, ["--aof", "--recover"], copy);
            using var connection = garnet.Connect();
            var reply = connection.Call("DBSIZE");
            size = reply.Kind == ':' ? reply.Integer : null;
            answer = string.Create(CultureInfo.InvariantCulture, $"DBSIZE {Show(reply)} of {aof.Keys:N0} keys");
        }
        catch (HarnessException e)
        {
            string first = e.Message.Split('\n')[0];
            answer = $"did not start: {first}";
        }
        bool loaded = size == aof.Keys;
        return new GarnetCapability("aof-load", "loading Redis 7's multi-part AOF (appendonlydir/appendonly.aof.manifest)",
            "garnet-server --aof --recover started on a copy of a generated 256 KiB Redis AOF", answer, loaded,
            loaded ? "loads it" : "n/a: Garnet does not load a Redis AOF");
    }

    private static string Fields(Dictionary<string, string>? fields)
        => fields is null ? "no such section" : fields.Count == 0 ? "empty" : string.Join(", ", fields.Keys.Take(6)) + (fields.Count > 6 ? ", ..." : "");

    private static string Show(RespReply reply) => reply.Kind switch
    {
        '$' when reply.Text is null => "(nil)",
        '*' when reply.Items is null => "(nil array)",
        '*' => $"an array of {reply.Items.Count}" + (reply.Items.Count is > 0 and <= 4 ? ": " + string.Join(" ", reply.Items.Select(i => i.Text ?? "...")) : ""),
        ':' => reply.Integer.ToString(CultureInfo.InvariantCulture),
        '$' or '+' => $"\"{reply.Text}\"",
        _ => $"{reply.Kind}{reply.Text}",
    };

    public static void Write(StringBuilder md, IReadOnlyList<GarnetCapability> capabilities, IReadOnlyList<string> suitesRun)
    {
        void Line(string text = "") => md.Append(text).Append('\n');
        Line();
        Line("### Garnet: what each suite needs, as it answered");
        Line();
        Line($"Garnet runs beside redis-server in the {string.Join(", ", BenchmarkOptions.GarnetSuites)} suites. Before the suites, a fresh Garnet was asked for what the suites rely on from redis-server " +
             "(and a second one started with `--aof --recover` on a small Redis AOF). This run's suites: " + string.Join(", ", suitesRun) + ".");
        Line();
        Line("| Suite | Needs | Asked | Garnet answered | Has it | So |");
        Line("| --- | --- | --- | --- | :---: | --- |");
        foreach (var c in capabilities)
            Line($"| {c.Suite} | {c.Need} | `{c.Asked}` | {c.Answer.Replace("|", "\\|", StringComparison.Ordinal)} | {(c.Available ? "yes" : "no")} | {c.Consequence} |");
        Line();
        Line("The diagnostics, studio and monitor suites measure our own server's diagnostics against themselves switched off, with redis-server as a reference only; they run without Garnet.");
    }
}
