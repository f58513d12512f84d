using Diagnostics.Server.DataTypes;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Protocol;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>OBJECT ENCODING | FREQ | IDLETIME | REFCOUNT | HELP: how a key's value is held and used.</summary>
public static unsafe class ObjectCommands
{
    private const string PolicyNote = " Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";
    private const string FreqNotTracked = "ERR An LFU maxmemory policy is not selected, access frequency not tracked." + PolicyNote;
    private const string IdleNotTracked = "ERR An LFU maxmemory policy is selected, idle time not tracked." + PolicyNote;

    /// <summary>Redis keeps one shared object for each integer below this (OBJ_SHARED_INTEGERS).</summary>
    private const long SharedIntegers = 10000;
    /// <summary>The reference count Redis reports for its shared objects (OBJ_SHARED_REFCOUNT).</summary>
    private const int SharedRefCount = int.MaxValue;

    private static readonly string[] HelpLines =
    [
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        "HELP",
        "    Prints this help.",
    ];

    public static void Register(CommandTable table)
    {
        const string g = "generic";
        const CommandFlags f = ReadOnly;
        CommandArgument[] key = [new("key", "key")];
        table.Add(new CommandSpec("object", -2, None, 0, 0, 0, null, g, "A container for object introspection commands.", "2.2.3", "Depends on subcommand.")
            .WithSubcommands(
                new CommandSpec("encoding", 3, f, 2, 2, 1, Encoding, g, "Returns the internal encoding of a Redis object.", "2.2.3")
                { Arguments = key },
                new CommandSpec("freq", 3, f, 2, 2, 1, Freq, g, "Returns the logarithmic access frequency counter of a Redis object.", "4.0.0")
                { Arguments = key },
                new CommandSpec("idletime", 3, f, 2, 2, 1, IdleTime, g, "Returns the time since the last access to a Redis object.", "2.2.3")
                { Arguments = key },
                new CommandSpec("refcount", 3, f, 2, 2, 1, RefCount, g, "Returns the reference count of a value of a key.", "2.2.3")
                { Arguments = key },
                new CommandSpec("help", 2, f | Loading | Stale, 0, 0, 0, Help, g, "Returns helpful text about the different subcommands.", "6.2.0")));
    }

    private static void Encoding(ref CommandContext c)
    {
        Entry* e = KeyLookup.Peek(ref c, c.Arg(2));
        if (e == null)
            c.Reply.Null();
        else
            c.Reply.Bulk(ValueEncoding.Of(e));
    }

    private static void Freq(ref CommandContext c)
    {
        Entry* e = KeyLookup.Peek(ref c, c.Arg(2));
        if (e == null)
            c.Reply.Null();
        else if (!IsLfuPolicy(c.Server.Config))
            c.Error(FreqNotTracked);
        else
            c.Reply.Integer(LfuCounter.Decayed(e->Frequency, e->AccessClock));
    }

    private static void IdleTime(ref CommandContext c)
    {
        Entry* e = KeyLookup.Peek(ref c, c.Arg(2));
        if (e == null)
            c.Reply.Null();
        else if (IsLfuPolicy(c.Server.Config))
            c.Error(IdleNotTracked);
        else
            c.Reply.Integer(LruClock.IdleSeconds(e->AccessClock));
    }

    /// <summary>
    /// 1 for every value this server stores, except where Redis would have used one of its shared
    /// small integers (0..9999, when maxmemory is off or the policy is neither LRU nor LFU): those
    /// report Redis's shared reference count, so tools that probe for sharing see what they expect.
    /// </summary>
    private static void RefCount(ref CommandContext c)
    {
        Entry* e = KeyLookup.Peek(ref c, c.Arg(2));
        if (e == null)
            c.Reply.Null();
        else if (ValueEncoding.IsInteger(e, out long value) && value is >= 0 and < SharedIntegers && SharesIntegers(c.Server.Config))
            c.Reply.Integer(SharedRefCount);
        else
            c.Reply.Integer(1);
    }

    private static void Help(ref CommandContext c) => HelpReply.Write(c.Reply, HelpLines);

    private static bool IsLfuPolicy(ServerConfig config) => (config.MaxMemoryPolicy & EvictionPolicy.Lfu) != 0;

    private static bool SharesIntegers(ServerConfig config)
        => config.MaxMemory == 0 || (config.MaxMemoryPolicy & (EvictionPolicy.Lru | EvictionPolicy.Lfu)) == 0;
}
