namespace Diagnostics.Server.Commands;

/// <summary>
/// Name to <see cref="CommandSpec"/>. Lookup is case-insensitive and allocation-free: the name's
/// bytes are widened on the stack and matched through the dictionary's span lookup.
/// Each command family registers its own specs; this class knows no command by name.
/// </summary>
public sealed class CommandTable
{
    private readonly Dictionary<string, CommandSpec> _byName = new(StringComparer.OrdinalIgnoreCase);
    private readonly Dictionary<string, CommandSpec>.AlternateLookup<ReadOnlySpan<char>> _lookup;
    private readonly List<CommandSpec> _all = [];

    public CommandTable()
    {
        _lookup = _byName.GetAlternateLookup<ReadOnlySpan<char>>();
        ConnectionCommands.Register(this);
        ClientCommands.Register(this);
        StringCommands.Register(this);
        BitmapCommands.Register(this);
        HyperLogLogCommands.Register(this);
        HashCommands.Register(this);
        SetCommands.Register(this);
        ListCommands.Register(this);
        SortedSetCommands.Register(this);
        StreamCommands.Register(this);
        GeoCommands.Register(this);
        BlockingCommands.Register(this);
        TransactionCommands.Register(this);
        ScriptingCommands.Register(this);
        FunctionCommands.Register(this);
        PubSubCommands.Register(this);
        KeyCommands.Register(this);
        DumpCommands.Register(this);
        SortCommands.Register(this);
        ExpireCommands.Register(this);
        ScanCommands.Register(this);
        DatabaseCommands.Register(this);
        ObjectCommands.Register(this);
        MemoryCommands.Register(this);
        ServerCommands.Register(this);
        ReplicationCommands.Register(this);
        CommandCommands.Register(this);
        ConfigCommands.Register(this);
        InfoCommand.Register(this);
        MonitorCommand.Register(this);
        DebugCommands.Register(this);
        SlowLogCommands.Register(this);
        AclCommands.Register(this);
        LatencyCommands.Register(this);
        PubSub.CommandEvents.Attach(this);
    }

    /// <summary>Top-level commands in registration order.</summary>
    public IReadOnlyCollection<CommandSpec> Commands => _byName.Values;

    /// <summary>Every spec including subcommands, indexed by <see cref="CommandSpec.Id"/>.</summary>
    public IReadOnlyList<CommandSpec> AllSpecs => _all;

    public void Add(CommandSpec spec)
    {
        _byName.Add(spec.Name, spec);
        Index(spec);
    }

    private void Index(CommandSpec spec)
    {
        spec.Id = _all.Count;
        Acl.AclCheck.Classify(spec);
        _all.Add(spec);
        if (spec.Subcommands is not null)
            foreach (var sub in spec.Subcommands.Values)
                Index(sub);
    }

    public CommandSpec? Find(ReadOnlySpan<byte> name)
    {
        if (name.Length > 64)
            return null;
        Span<char> chars = stackalloc char[name.Length];
        for (int i = 0; i < name.Length; i++)
            chars[i] = (char)name[i];
        return _lookup.TryGetValue(chars, out var spec) ? spec : null;
    }

    public CommandSpec? Find(string name) => _byName.GetValueOrDefault(name);

    /// <summary>EXEC, which the connection routes by its queue rather than its arguments.</summary>
    public CommandSpec Exec => _exec ??= Find("exec")!;
    private CommandSpec? _exec;

    /// <summary>PING, which Redis refuses with MISCONF like a write while the disk fails.</summary>
    public CommandSpec Ping => _ping ??= Find("ping")!;
    private CommandSpec? _ping;
}
