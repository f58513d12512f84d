using System.Text;
using Diagnostics.Server.Commands;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Acl;

/// <summary>One key pattern of a selector and what it lets a command do with matching keys (~, %R~, %W~, %RW~).</summary>
public sealed record AclKeyPattern(string Text, bool Read, bool Write)
{
    public byte[] Bytes { get; } = Encoding.UTF8.GetBytes(Text);

    /// <summary>As ACL LIST and GETUSER spell it: ~p for read and write, %R~p or %W~p for one of them.</summary>
    public string Describe() => Read && Write ? "~" + Text : Read ? "%R~" + Text : "%W~" + Text;
}

/// <summary>
/// One set of permissions (Redis's selector): the commands allowed, as one bit per command and
/// subcommand of the command table, plus first arguments allowed for commands that are otherwise
/// denied (+select|0); the key patterns with their read/write rights; the channel patterns. A
/// user has a root selector and any number of others; a command runs when one of them allows
/// all of it. Immutable once built (<see cref="Clone"/> then change, then publish).
/// </summary>
public sealed class AclSelector
{
    private readonly CommandTable _commands;
    private ulong[] _allowed;
    private Dictionary<int, List<byte[]>>? _firstArgs;

    public AclSelector(CommandTable commands)
    {
        _commands = commands;
        _allowed = new ulong[(commands.AllSpecs.Count + 63) / 64];
    }

    /// <summary>
    /// +@all (or allcommands) was given after the last -@all: commands added later would be allowed
    /// too (Redis's reserved "future commands" bit), even when single ones were taken away since.
    /// The command description then starts from +@all and takes away.
    /// </summary>
    public bool AllCommands { get; private set; }
    public bool AllKeys { get; private set; }
    public bool AllChannels { get; private set; }
    public List<AclKeyPattern> Keys { get; private set; } = [];
    public List<string> Channels { get; private set; } = [];
    // The channel patterns' and first arguments' bytes, made when the rule is applied, so checking a
    // command allocates nothing.
    private List<byte[]> _channelBytes = [];

    /// <summary>A selector over the same command table with nothing allowed.</summary>
    public AclSelector Empty() => new(_commands);

    public AclSelector Clone() => new(_commands)
    {
        _allowed = (ulong[])_allowed.Clone(),
        _firstArgs = _firstArgs?.ToDictionary(p => p.Key, p => new List<byte[]>(p.Value)),
        AllCommands = AllCommands,
        AllKeys = AllKeys,
        AllChannels = AllChannels,
        Keys = [.. Keys],
        Channels = [.. Channels],
        _channelBytes = [.. _channelBytes],
    };

    /// <summary>Every command of the table, every key and every channel.</summary>
    public bool AllowsEverything()
    {
        if (!AllKeys || !AllChannels)
            return false;
        foreach (var spec in _commands.AllSpecs)
            if (!Allows(spec))
                return false;
        return true;
    }

    public bool Allows(CommandSpec spec) => (_allowed[spec.Id >> 6] & (1UL << (spec.Id & 63))) != 0;

    /// <summary>The command (its spec already resolved to the subcommand) with this first argument is allowed.</summary>
    public bool AllowsCall(CommandSpec spec, ReadOnlySpan<byte> firstArg)
    {
        if (Allows(spec))
            return true;
        if (_firstArgs is null || !_firstArgs.TryGetValue(spec.Id, out var args) || firstArg.IsEmpty)
            return false;
        foreach (byte[] arg in args)
            if (Ascii.EqualsIgnoreCase(firstArg, arg))
                return true;
        return false;
    }

    /// <summary>The key may be read (or written) under this selector's patterns.</summary>
    public bool AllowsKey(ReadOnlySpan<byte> key, bool read, bool write)
    {
        if (AllKeys)
            return true;
        foreach (var pattern in Keys)
        {
            if ((read && !pattern.Read) || (write && !pattern.Write))
                continue;
            if (GlobPattern.IsMatch(pattern.Bytes, key))
                return true;
        }
        return false;
    }

    /// <summary>
    /// A channel a command names: for PUBLISH and SUBSCRIBE the channel must match a pattern; for
    /// PSUBSCRIBE (<paramref name="isPattern"/>) the pattern itself must be one allowed, literally.
    /// </summary>
    public bool AllowsChannel(ReadOnlySpan<byte> channel, bool isPattern)
    {
        if (AllChannels)
            return true;
        foreach (byte[] bytes in _channelBytes)
            if (isPattern ? channel.SequenceEqual(bytes) : GlobPattern.IsMatch(bytes, channel))
                return true;
        return false;
    }

    /// <summary>
    /// Applies one selector rule (commands, keys, channels); returns null, or Redis's reason for
    /// refusing it (the caller wraps it in "Error in ACL SETUSER modifier ...").
    /// </summary>
    public string? Apply(string rule)
    {
        switch (rule.ToLowerInvariant())
        {
            case "allkeys":
                return Apply("~*");
            case "resetkeys":
                AllKeys = false;
                Keys = [];
                return null;
            case "allchannels":
                return Apply("&*");
            case "resetchannels":
                AllChannels = false;
                Channels = [];
                _channelBytes = [];
                return null;
            case "allcommands":
                return Apply("+@all");
            case "nocommands":
                return Apply("-@all");
        }
        if (rule.Length == 0)
            return "Syntax error";
        if (rule[0] == '~' || rule[0] == '%')
            return AddKeyPattern(rule);
        if (rule[0] == '&')
        {
            if (AllChannels)
                return $"Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels";
            string channel = rule[1..];
            if (channel == "*")
            {
                AllChannels = true;
                Channels = [];
                _channelBytes = [];
            }
            else if (!Channels.Contains(channel))
            {
                Channels.Add(channel);
                _channelBytes.Add(Encoding.UTF8.GetBytes(channel));
            }
            return null;
        }
        if (rule[0] is '+' or '-')
            return ApplyCommandRule(rule[0] == '+', rule[1..]);
        return "Syntax error";
    }

    private string? AddKeyPattern(string rule)
    {
        bool read = true, write = true;
        string pattern;
        if (rule[0] == '%')
        {
            int tilde = rule.IndexOf('~');
            if (tilde < 2)
                return "Syntax error";
            read = write = false;
            foreach (char flag in rule.AsSpan(1, tilde - 1))
            {
                if (flag is 'R' or 'r') read = true;
                else if (flag is 'W' or 'w') write = true;
                else return "Syntax error";
            }
            pattern = rule[(tilde + 1)..];
        }
        else
            pattern = rule[1..];
        if (AllKeys)
            return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns";
        if (pattern == "*" && read && write)
        {
            AllKeys = true;
            Keys = [];
            return null;
        }
        // The same pattern again widens its rights, as Redis merges them.
        int existing = Keys.FindIndex(k => k.Text == pattern);
        if (existing >= 0)
            Keys[existing] = new AclKeyPattern(pattern, Keys[existing].Read || read, Keys[existing].Write || write);
        else
            Keys.Add(new AclKeyPattern(pattern, read, write));
        return null;
    }

    private string? ApplyCommandRule(bool allow, string name)
    {
        if (name.StartsWith('@'))
        {
            string category = name[1..];
            if (category.Equals("all", StringComparison.OrdinalIgnoreCase))
            {
                Array.Fill(_allowed, allow ? ulong.MaxValue : 0);
                _firstArgs = null;
                AllCommands = allow;
                return null;
            }
            if (!CommandMetadata.TryParseCategory(category, out var flag))
                return "Unknown command or category name in ACL";
            foreach (var spec in _commands.AllSpecs)
                if ((CommandMetadata.Categories(spec) & flag) != 0)
                    SetCommand(spec, allow);
            return null;
        }
        int bar = name.IndexOf('|');
        if (bar < 0)
        {
            if (_commands.Find(name) is not { } command)
                return "Unknown command or category name in ACL";
            SetCommand(command, allow);
            return null;
        }
        if (_commands.Find(name[..bar]) is not { } parent)
            return "Unknown command or category name in ACL";
        string rest = name[(bar + 1)..];
        if (rest.Length == 0 || rest.Contains('|'))
            return "Syntax error";
        if (parent.Subcommands is { } subcommands)
        {
            if (!subcommands.TryGetValue(rest, out var sub) && !TryFindIgnoringCase(subcommands, rest, out sub))
                return "Unknown command or category name in ACL";
            SetCommand(sub!, allow);
            return null;
        }
        // A first argument of a command without subcommands (+select|0): only to allow, as Redis.
        if (!allow)
            return "Unknown command or category name in ACL";
        if (Allows(parent))
            return null;
        _firstArgs ??= [];
        if (!_firstArgs.TryGetValue(parent.Id, out var args))
            _firstArgs[parent.Id] = args = [];
        byte[] arg = Encoding.UTF8.GetBytes(rest.ToLowerInvariant());
        if (!args.Exists(a => a.AsSpan().SequenceEqual(arg)))
            args.Add(arg);
        return null;
    }

    private static bool TryFindIgnoringCase(IReadOnlyDictionary<string, CommandSpec> subcommands, string name, out CommandSpec? found)
    {
        foreach (var (key, spec) in subcommands)
        {
            if (key.Equals(name, StringComparison.OrdinalIgnoreCase))
            {
                found = spec;
                return true;
            }
        }
        found = null;
        return false;
    }

    /// <summary>A command and, for a container, all its subcommands; first arguments recorded for it are dropped.</summary>
    private void SetCommand(CommandSpec spec, bool allow)
    {
        SetBit(spec.Id, allow);
        _firstArgs?.Remove(spec.Id);
        if (spec.Subcommands is { } subcommands)
            foreach (var sub in subcommands.Values)
                SetBit(sub.Id, allow);
    }

    private void SetBit(int id, bool value)
    {
        if (value)
            _allowed[id >> 6] |= 1UL << (id & 63);
        else
            _allowed[id >> 6] &= ~(1UL << (id & 63));
    }

    public string DescribeKeys()
    {
        if (AllKeys)
            return "~*";
        return string.Join(' ', Keys.Select(k => k.Describe()));
    }

    /// <summary>
    /// As ACL LIST spells them: &amp;* for all, else resetchannels then each pattern (Redis 7.0's
    /// acl-pubsub-default is resetchannels, so the rule says where the list starts).
    /// </summary>
    public string DescribeChannels() => AllChannels ? "&*" : string.Join(' ', ["resetchannels", .. Channels.Select(c => "&" + c)]);

    /// <summary>As ACL GETUSER answers them: the patterns alone ("&amp;*", "&amp;news.*", or "").</summary>
    public string ChannelPatterns() => AllChannels ? "&*" : string.Join(' ', Channels.Select(c => "&" + c));

    /// <summary>
    /// The command rules as ACL SETUSER takes them: +@all or -@all, then the categories that fit
    /// best (each applied only when it brings more commands into line than out), then the single
    /// commands still different, then first arguments. Applied to an empty selector they give
    /// exactly this one's commands.
    /// </summary>
    public string DescribeCommands()
    {
        var rules = new StringBuilder();
        bool additive = !AllCommands;
        var described = new AclSelector(_commands);
        described.Apply(additive ? "-@all" : "+@all");
        rules.Append(additive ? "-@all" : "+@all");
        // What is still to be brought into line: categories are tried against it until none helps.
        var remaining = Clone();
        var applied = new bool[CategoryCount];
        while (true)
        {
            int best = -1;
            long fewestDifferent = long.MaxValue, mostSame = 0;
            for (int bit = 0; bit < CategoryCount; bit++)
            {
                if (applied[bit])
                    continue;
                var flag = (AclCategories)(1 << bit);
                long on = 0, off = 0;
                foreach (var spec in _commands.AllSpecs)
                {
                    if ((CommandMetadata.Categories(spec) & flag) == 0)
                        continue;
                    if (remaining.Allows(spec)) on++;
                    else off++;
                }
                long different = additive ? off : on, same = additive ? on : off;
                if (same > different && (different < fewestDifferent || (different == fewestDifferent && same > mostSame)))
                {
                    best = bit;
                    fewestDifferent = different;
                    mostSame = same;
                }
            }
            if (best < 0)
                break;
            string category = CommandMetadata.CategoryList((AclCategories)(1 << best))[0];
            described.Apply((additive ? "+" : "-") + category);
            remaining.Apply((additive ? "-" : "+") + category);
            rules.Append(' ').Append(additive ? '+' : '-').Append(category);
            applied[best] = true;
        }
        foreach (var spec in _commands.AllSpecs)
        {
            bool mine = Allows(spec);
            if (mine != described.Allows(spec))
            {
                rules.Append(' ').Append(mine ? '+' : '-').Append(spec.FullName);
                described.SetCommand(spec, mine);
            }
            if (!mine && _firstArgs is not null && _firstArgs.TryGetValue(spec.Id, out var args))
                foreach (byte[] arg in args)
                    rules.Append(" +").Append(spec.FullName).Append('|').Append(Encoding.UTF8.GetString(arg));
        }
        return rules.ToString();
    }

    private static readonly int CategoryCount = Enum.GetValues<AclCategories>().Length - 1;
}
