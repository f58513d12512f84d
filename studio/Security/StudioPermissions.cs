namespace Diagnostics.Studio.Security;

/// <summary>
/// What a studio or API user may see and do. Each is granted to an ACL user exactly when the user
/// may run the Redis command that shows or does the same over RESP (<see cref="StudioPermission"/>),
/// so ACL rules are the one place access is decided; the API key has its own list
/// (http-api-key-scope).
/// </summary>
[Flags]
public enum StudioPermissions
{
    None = 0,
    /// <summary>Dashboards, history, threads, command statistics, latency, memory, disk I/O, runtime, replication, the doctor, the log, /metrics.</summary>
    Watch = 1 << 0,
    /// <summary>The client list: addresses, names, users, last commands.</summary>
    Clients = 1 << 1,
    /// <summary>Closing a client's connection.</summary>
    KillClients = 1 << 2,
    /// <summary>The slow log, whose entries hold the calls' arguments: keys and values.</summary>
    SlowLog = 1 << 3,
    /// <summary>Key names: the hot keys.</summary>
    Keys = 1 << 4,
    /// <summary>The server's settings (secrets redacted).</summary>
    Config = 1 << 5,
    /// <summary>ACL LOG: refused commands and failed logins, with who and from where.</summary>
    AclLog = 1 << 6,
    /// <summary>The source of loaded scripts, which may embed secrets.</summary>
    ScriptSource = 1 << 7,

    All = Watch | Clients | KillClients | SlowLog | Keys | Config | AclLog | ScriptSource,
}

/// <summary>One permission: its name (in http-api-key-scope), the RESP command that grants it, and what it opens.</summary>
public sealed record StudioPermissionInfo(StudioPermissions Permission, string Name, string Command, string Opens);

public static class StudioPermission
{
    /// <summary>
    /// Every permission with the command (and subcommand, as ACL rules spell it) that grants it: a
    /// user who may run INFO may watch the dashboards, one who may run CLIENT KILL may kill a
    /// client from the studio.
    /// </summary>
    public static readonly IReadOnlyList<StudioPermissionInfo> All =
    [
        new(StudioPermissions.Watch, "watch", "info", "watch the dashboards"),
        new(StudioPermissions.Clients, "clients", "client|list", "see the clients"),
        new(StudioPermissions.KillClients, "kill-clients", "client|kill", "kill clients"),
        new(StudioPermissions.SlowLog, "slowlog", "slowlog|get", "see the slow log's arguments"),
        new(StudioPermissions.Keys, "keys", "scan", "see key names"),
        new(StudioPermissions.Config, "config", "config|get", "see the settings"),
        new(StudioPermissions.AclLog, "acl-log", "acl|log", "see the ACL log"),
        new(StudioPermissions.ScriptSource, "script-source", "function|list", "see scripts' source"),
    ];

    /// <summary>Every permission's name, as http-api-key-scope takes them.</summary>
    public static string KnownNames => string.Join(' ', All.Select(info => info.Name));

    /// <summary>The permissions <paramref name="needed"/> holds that <paramref name="granted"/> lacks.</summary>
    public static StudioPermissions Missing(StudioPermissions needed, StudioPermissions granted) => needed & ~granted;

    /// <summary>"+info +client|kill": the ACL rules that would grant <paramref name="permissions"/>.</summary>
    public static string Rules(StudioPermissions permissions)
    {
        var rules = new List<string>();
        foreach (var info in All)
            if ((permissions & info.Permission) != 0)
                rules.Add("+" + info.Command);
        return string.Join(' ', rules);
    }

    /// <summary>"watch clients": the names of <paramref name="permissions"/> as http-api-key-scope lists them.</summary>
    public static string Names(StudioPermissions permissions)
    {
        if (permissions == StudioPermissions.All)
            return "all";
        var names = new List<string>();
        foreach (var info in All)
            if ((permissions & info.Permission) != 0)
                names.Add(info.Name);
        return string.Join(' ', names);
    }

    /// <summary>Parses a list of permission names ("all" for every one); null with the unknown name otherwise.</summary>
    public static StudioPermissions? Parse(IEnumerable<string> names, out string? unknown)
    {
        unknown = null;
        var permissions = StudioPermissions.None;
        foreach (string name in names)
        {
            if (name.Equals("all", StringComparison.OrdinalIgnoreCase))
            {
                permissions = StudioPermissions.All;
                continue;
            }
            var info = FindByName(name);
            if (info is null)
            {
                unknown = name;
                return null;
            }
            permissions |= info.Permission;
        }
        return permissions;
    }

    private static StudioPermissionInfo? FindByName(string name)
    {
        foreach (var info in All)
            if (info.Name.Equals(name, StringComparison.OrdinalIgnoreCase))
                return info;
        return null;
    }
}
