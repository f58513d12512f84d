using System.Text;

namespace Diagnostics.Server.Commands;

/// <summary>
/// Everything the server knows about one command: its name, arity, flags and key positions (for
/// routing and COMMAND INFO), the handler, and the documentation COMMAND DOCS returns.
/// </summary>
public sealed class CommandSpec
{
    public CommandSpec(string name, int arity, CommandFlags flags, int firstKey, int lastKey, int keyStep,
        CommandHandler? handler, string group, string summary, string since = "1.0.0", string complexity = "O(1)")
    {
        Name = name.ToLowerInvariant();
        Arity = arity;
        Flags = flags;
        FirstKey = firstKey;
        LastKey = lastKey;
        KeyStep = keyStep;
        Handler = handler;
        Group = group;
        Summary = summary;
        Since = since;
        Complexity = complexity;
        NameBytes = Encoding.ASCII.GetBytes(Name);
    }

    public string Name { get; }
    /// <summary>"client|list" for subcommands, as COMMAND INFO and error messages spell it.</summary>
    // Built once: the in-flight slot stores it for every command, which must not allocate.
    public string FullName => _fullName ??= Parent is null ? Name : $"{Parent.Name}|{Name}";
    private string? _fullName;
    public byte[] NameBytes { get; }
    /// <summary>Positive: exact argument count including the name; negative: at least that many.</summary>
    public int Arity { get; }
    public CommandFlags Flags { get; }
    public int FirstKey { get; }
    /// <summary>Index of the last key; -1 means the last argument, -2 the one before it.</summary>
    public int LastKey { get; }
    public int KeyStep { get; }
    /// <summary>For commands that count their keys: the argument holding the count, the keys right after it; 0 for none.</summary>
    public int KeyCountIndex { get; init; }
    /// <summary>
    /// The only key a write changes when the others are just read (the destination of the STORE
    /// forms, COPY's target): WATCH is touched for it alone. 0: every key may change.
    /// </summary>
    public int WrittenKey { get; init; }
    /// <summary>
    /// For a command whose destination follows a keyword (SORT ... STORE dest, GEORADIUS ... STORE
    /// dest): the argument index of that key in this call, 0 when it has none. The key is routed,
    /// watched and tracked with the fixed ones, and is the only key such a call writes.
    /// </summary>
    public Func<Protocol.ArgList, int>? StoreKey { get; init; }
    /// <summary>
    /// For a command that may read keys named by patterns in its arguments (SORT BY/GET): true when
    /// this call does. Such keys may live in any shard, so the call holds every shard.
    /// </summary>
    public Func<Protocol.ArgList, bool>? ReadsPatternKeys { get; init; }
    /// <summary>
    /// For a command whose keys follow a keyword (XREAD ... STREAMS k1 k2 id1 id2): the first and
    /// last key argument of this call, replacing the fixed range; (0, -1) when there are none
    /// (a syntax error the handler reports without touching data).
    /// </summary>
    public Func<Protocol.ArgList, (int First, int Last)>? KeyRange { get; init; }
    /// <summary>The keyspace notification a successful change by this command publishes for its keys; null when it has none or publishes its own.</summary>
    public byte[]? Event { get; internal set; }
    public Engine.KeyspaceEventTypes EventType { get; internal set; }
    public CommandHandler? Handler { get; }
    public string Group { get; }
    public string Summary { get; }
    public string Since { get; }
    public string Complexity { get; }
    /// <summary>Arguments that hold secrets, shown as "(redacted)" wherever commands are recorded; null when none do.</summary>
    public ArgumentRedactor? Redact { get; init; }

    /// <summary>Documented arguments (COMMAND DOCS), in order.</summary>
    public IReadOnlyList<CommandArgument> Arguments { get; init; } = [];
    public CommandSpec? Parent { get; private set; }
    public IReadOnlyDictionary<string, CommandSpec>? Subcommands => _subcommands;
    /// <summary>Index into per-command statistics arrays.</summary>
    public int Id { get; internal set; }
    /// <summary>A write that only overwrites or deletes its keys (SET, DEL, the EXPIRE family): the ACL needs write alone on them (set with the table, <see cref="Acl.AclCheck.Classify"/>).</summary>
    public bool OverwritesKeys { get; internal set; }
    /// <summary>The arguments the ACL checks as channels (set with the table, <see cref="Acl.AclCheck.Classify"/>).</summary>
    public Acl.AclChannelArguments ChannelArguments { get; internal set; }

    private Dictionary<string, CommandSpec>? _subcommands;
    private Dictionary<string, CommandSpec>.AlternateLookup<ReadOnlySpan<char>> _subLookup;

    public bool HasKeys => FirstKey > 0 || KeyCountIndex > 0 || KeyRange is not null;

    /// <summary>The only key this call writes (<see cref="WrittenKey"/>, or its <see cref="StoreKey"/>); 0: every key may change.</summary>
    public int WrittenKeyOf(Protocol.ArgList args) => StoreKey is { } store ? store(args) : WrittenKey;

    /// <summary>True when this call holds every shard: the command always does, or its patterns name keys (SORT BY/GET).</summary>
    public bool HoldsAllShards(Protocol.ArgList args)
        => (Flags & CommandFlags.AllShards) != 0 || (ReadsPatternKeys is { } reads && reads(args));
    public bool IsWrite => (Flags & CommandFlags.Write) != 0;

    public CommandSpec WithSubcommands(params CommandSpec[] subcommands)
    {
        _subcommands = new Dictionary<string, CommandSpec>(StringComparer.OrdinalIgnoreCase);
        foreach (var sub in subcommands)
        {
            sub.Parent = this;
            _subcommands.Add(sub.Name, sub);
        }
        _subLookup = _subcommands.GetAlternateLookup<ReadOnlySpan<char>>();
        return this;
    }

    public CommandSpec? FindSubcommand(ReadOnlySpan<byte> name)
    {
        if (_subcommands is null || name.Length > 64)
            return null;
        Span<char> chars = stackalloc char[name.Length];
        for (int i = 0; i < name.Length; i++)
            chars[i] = (char)name[i];
        return _subLookup.TryGetValue(chars, out var spec) ? spec : null;
    }

    /// <summary>True when <paramref name="argCount"/> (name included) satisfies the arity.</summary>
    public bool AcceptsArgCount(int argCount) => Arity >= 0 ? argCount == Arity : argCount >= -Arity;

    /// <summary>Index of the last key for a command with <paramref name="argCount"/> arguments.</summary>
    public int LastKeyIndex(int argCount) => LastKey >= 0 ? LastKey : argCount + LastKey;
}

/// <summary>One documented argument of a command (COMMAND DOCS "arguments").</summary>
public sealed record CommandArgument(string Name, string Type, bool Optional = false, bool Multiple = false,
    string? Token = null, IReadOnlyList<CommandArgument>? Children = null);
