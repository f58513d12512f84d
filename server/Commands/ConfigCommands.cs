using Diagnostics.Server.Configuration;
using Diagnostics.Server.Diagnostics.Latency;
using Diagnostics.Server.Diagnostics.Threads;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>CONFIG GET / SET / RESETSTAT / REWRITE / HELP over <see cref="ServerConfig"/>.</summary>
public static class ConfigCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "server";
        const CommandFlags f = Connection | Admin | NoScript | Loading | Stale;
        const string perParameter = "O(N) when N is the number of configuration parameters provided";
        table.Add(new CommandSpec("config", -2, Connection, 0, 0, 0, null, g, "A container for server configuration commands.", "2.0.0", "Depends on subcommand.")
            .WithSubcommands(
                new CommandSpec("get", -3, f, 0, 0, 0, Get, g, "Returns the effective values of configuration parameters.", "2.0.0", perParameter)
                { Arguments = [new("parameter", "string", Multiple: true)] },
                new CommandSpec("set", -4, f, 0, 0, 0, Set, g, "Sets configuration parameters in-flight.", "2.0.0", perParameter)
                {
                    Arguments = [new("data", "block", Multiple: true, Children: [new("parameter", "string"), new("value", "string")])],
                    // The value of every secret setting, whether the command succeeds or not (Redis 7's SENSITIVE_CONFIG).
                    Redact = (args, index, config) => index >= 3 && index % 2 == 1
                        && config.Find(System.Text.Encoding.UTF8.GetString(args[index - 1]))?.Secret == true,
                },
                // Parks every shard so the per-database expiry counters are reset by their owner's rules.
                new CommandSpec("resetstat", 2, (f & ~Connection) | AllShards, 0, 0, 0, ResetStat, g, "Resets the server's statistics.", "2.0.0"),
                new CommandSpec("rewrite", 2, f, 0, 0, 0, Rewrite, g, "Persists the effective configuration to file.", "2.8.0"),
                new CommandSpec("help", 2, Connection | Loading | Stale, 0, 0, 0, Help, g, "Returns helpful text about the different subcommands.", "5.0.0")));
    }

    /// <summary>
    /// Parameters whose name or alias matches any pattern, as a map. A pattern without wildcards is
    /// an exact lookup answered under the name as typed; globs match every name and alias.
    /// </summary>
    private static void Get(ref CommandContext c)
    {
        var config = c.Server.Config;
        var matches = new List<(string Name, ConfigParameter Parameter)>();
        var seen = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        for (int i = 2; i < c.ArgCount; i++)
        {
            string pattern = c.ArgString(i);
            if (!Engine.GlobPattern.HasWildcards(pattern))
            {
                var parameter = config.Find(pattern);
                if (parameter is not null && seen.Add(pattern))
                    matches.Add((pattern, parameter));
                continue;
            }
            foreach (var parameter in config.Parameters)
            {
                if (Engine.GlobPattern.IsMatchIgnoringCase(pattern, parameter.Name) && seen.Add(parameter.Name))
                    matches.Add((parameter.Name, parameter));
                foreach (var alias in parameter.Aliases)
                    if (Engine.GlobPattern.IsMatchIgnoringCase(pattern, alias) && seen.Add(alias))
                        matches.Add((alias, parameter));
            }
        }
        c.Reply.MapHeader(matches.Count);
        foreach (var (name, parameter) in matches)
        {
            c.Reply.Bulk(name);
            c.Reply.Bulk(parameter.ShownToClients());
        }
    }

    /// <summary>
    /// Sets every pair or none: all names are checked first (unknown, immutable, protected, repeated), then
    /// values are applied in order and, if one is refused, those already applied are restored.
    /// </summary>
    private static void Set(ref CommandContext c)
    {
        if ((c.ArgCount & 1) == 1)
        {
            c.SyntaxError();
            return;
        }
        var config = c.Server.Config;
        int pairs = (c.ArgCount - 2) / 2;
        var parameters = new ConfigParameter[pairs];
        string? error = null;
        for (int i = 0; i < pairs && error is null; i++)
        {
            string name = c.ArgString(2 + i * 2);
            var parameter = config.Find(name);
            if (parameter is null)
                error = $"ERR Unknown option or number of arguments for CONFIG SET - '{name}'";
            else if (!parameter.Mutable)
                error = Failed(name, "can't set immutable config");
            else if (parameter.Protected && !ProtectedAction.Allowed(config.EnableProtectedConfigs, c.Client))
                error = Failed(name, "can't set protected config");
            else if (Array.IndexOf(parameters, parameter, 0, i) >= 0)
                error = Failed(name, "duplicate parameter");
            else
                parameters[i] = parameter;
        }
        if (error is not null)
        {
            c.Error(error);
            return;
        }

        var previous = new string[pairs];
        for (int i = 0; i < pairs; i++)
        {
            previous[i] = parameters[i].Get();
            string? problem = parameters[i].Set(c.ArgString(3 + i * 2));
            if (problem is null)
                continue;
            Restore(parameters, previous, i);
            c.Error(Failed(c.ArgString(2 + i * 2), problem));
            return;
        }
        // Each apply function once, after all values are in (a certificate and its key together).
        for (int i = 0; i < pairs; i++)
        {
            if (parameters[i].Apply is not { } apply || FirstWithApply(parameters, apply) != i)
                continue;
            if (apply() is not { } problem)
                continue;
            Restore(parameters, previous, pairs);
            // The applies that already took effect are run again on the restored values, as Redis
            // does; the refused one left what was in effect (its contract), so it is not.
            for (int j = 0; j < i; j++)
                if (parameters[j].Apply is { } undo && FirstWithApply(parameters, undo) == j)
                    undo();
            c.Error(Failed(c.ArgString(2 + i * 2), problem));
            return;
        }
        c.Reply.Ok();
    }

    private static void Restore(ConfigParameter[] parameters, string[] previous, int count)
    {
        for (int j = count - 1; j >= 0; j--)
            parameters[j].Set(previous[j]);
    }

    private static int FirstWithApply(ConfigParameter[] parameters, Func<string?> apply)
    {
        for (int i = 0; i < parameters.Length; i++)
            if (parameters[i].Apply == apply)
                return i;
        return -1;
    }

    private static string Failed(string name, string reason) => $"ERR CONFIG SET failed (possibly related to argument '{name}') - {reason}";

    private static void ResetStat(ref CommandContext c)
    {
        ThreadCounters.ResetAll();
        CommandLatency.ResetAll();
        c.Server.Stats.Reset();
        c.Server.Tls.Stats.Reset();
        c.Server.AuthFailures.Reset();
        // Every shard is parked (AllShards), so writing their counters here races with nobody.
        foreach (var shard in c.Server.Keyspace.Shards)
            foreach (var db in shard.Databases)
                db.ExpiredKeys = 0;
        c.Server.Keyspace.Eviction.ResetStatistics();
        c.Reply.Ok();
    }

    private static void Rewrite(ref CommandContext c)
    {
        string? path = c.Server.Config.ConfigFile;
        if (path is null)
        {
            c.Error("ERR The server is running without a config file");
            return;
        }
        // The ACL users go into the file as "user" lines unless an aclfile keeps them.
        string? problem = ConfigRewriter.Rewrite(c.Server.Config, path, c.Server.Config.AclFile.Length == 0 ? c.Server.Acl.Lines() : null);
        if (problem is null)
            c.Reply.Ok();
        else
            c.Error($"ERR Rewriting config file: {problem}");
    }

    private static void Help(ref CommandContext c)
    {
        string[] lines =
        [
            "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
            "SET <directive> <value>", "    Set the configuration <directive> to <value>.",
            "RESETSTAT", "    Reset statistics reported by the INFO command.",
            "REWRITE", "    Rewrite the configuration file.",
            "HELP", "    Prints this help.",
        ];
        HelpReply.Write(c.Reply, lines);
    }
}
