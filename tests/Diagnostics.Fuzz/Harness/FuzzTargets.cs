using Diagnostics.Fuzz.Targets;

namespace Diagnostics.Fuzz.Harness;

/// <summary>Every target, by the name fuzz.sh passes on the command line.</summary>
public static class FuzzTargets
{
    public static IReadOnlyList<string> Names { get; } = ["resp", "aof", "rdb", "config", "package", "announcement", "function-dump", "hll", "restore", "acl", "http-basic"];

    /// <summary>Creates the target on demand: the aof target starts a server's worth of state.</summary>
    public static IFuzzTarget? Create(string name) => name switch
    {
        "resp" => new RespTarget(),
        "aof" => new AofTarget(),
        "rdb" => new RdbTarget(),
        "config" => new ConfigTarget(),
        "package" => new PackageTarget(),
        "function-dump" => new FunctionDumpTarget(),
        "hll" => new HyperLogLogTarget(),
        "restore" => new RestorePayloadTarget(),
        "acl" => new AclTarget(),
        "http-basic" => new HttpBasicTarget(),
        "announcement" when OperatingSystem.IsLinux() => new AnnouncementTarget(),
        _ => null,
    };
}
