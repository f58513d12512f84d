using Diagnostics.Server.Configuration;
using Diagnostics.Server.PubSub;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Commands;

/// <summary>SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH and PUBSUB; the subscriptions are the client's <see cref="ClientSubscriptions"/>.</summary>
public static class PubSubCommands
{
    public static void Register(CommandTable table)
    {
        const string g = "pubsub";
        const CommandFlags f = CommandFlags.PubSub | NoScript | Loading | Stale | Connection | SubscribedContext;
        table.Add(new CommandSpec("subscribe", -2, f, 0, 0, 0, Subscribe, g, "Listens for messages published to channels.", "2.0.0", "O(N) where N is the number of channels to subscribe to.")
        { Arguments = [new("channel", "string", Multiple: true)] });
        table.Add(new CommandSpec("unsubscribe", -1, f, 0, 0, 0, Unsubscribe, g, "Stops listening to messages posted to channels.", "2.0.0", "O(N) where N is the number of channels to unsubscribe.")
        { Arguments = [new("channel", "string", Optional: true, Multiple: true)] });
        table.Add(new CommandSpec("psubscribe", -2, f, 0, 0, 0, PSubscribe, g, "Listens for messages published to channels that match one or more patterns.", "2.0.0", "O(N) where N is the number of patterns to subscribe to.")
        { Arguments = [new("pattern", "pattern", Multiple: true)] });
        table.Add(new CommandSpec("punsubscribe", -1, f, 0, 0, 0, PUnsubscribe, g, "Stops listening to messages published to channels that match one or more patterns.", "2.0.0", "O(N) where N is the number of patterns to unsubscribe.")
        { Arguments = [new("pattern", "pattern", Optional: true, Multiple: true)] });
        table.Add(new CommandSpec("publish", 3, CommandFlags.PubSub | CommandFlags.MayReplicate | Loading | Stale | Fast | Connection, 0, 0, 0, Publish, g, "Posts a message to a channel.", "2.0.0",
            "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client).")
        { Arguments = [new("channel", "string"), new("message", "string")] });
        const CommandFlags introspection = CommandFlags.PubSub | Loading | Stale | Connection;
        table.Add(new CommandSpec("pubsub", -2, introspection, 0, 0, 0, null, g, "A container for Pub/Sub commands.", "2.8.0", "Depends on subcommand.")
            .WithSubcommands(
                new CommandSpec("channels", -2, introspection, 0, 0, 0, Channels, g, "Returns the active channels.", "2.8.0", "O(N) where N is the number of active channels, and assuming constant time pattern matching (relatively short channels and patterns)")
                { Arguments = [new("pattern", "pattern", Optional: true)] },
                new CommandSpec("numsub", -2, introspection, 0, 0, 0, NumSub, g, "Returns a count of subscribers to channels.", "2.8.0", "O(N) for the NUMSUB subcommand, where N is the number of requested channels")
                { Arguments = [new("channel", "string", Optional: true, Multiple: true)] },
                new CommandSpec("numpat", 2, introspection, 0, 0, 0, NumPat, g, "Returns a count of unique pattern subscriptions.", "2.8.0"),
                new CommandSpec("help", 2, introspection, 0, 0, 0, Help, g, "Returns helpful text about the different subcommands.", "6.2.0")));
    }

    private static void Subscribe(ref CommandContext c) => Subscribe(ref c, patterns: false);
    private static void PSubscribe(ref CommandContext c) => Subscribe(ref c, patterns: true);
    private static void Unsubscribe(ref CommandContext c) => Unsubscribe(ref c, patterns: false);
    private static void PUnsubscribe(ref CommandContext c) => Unsubscribe(ref c, patterns: true);

    /// <summary>
    /// The client's subscriptions, or null with an error replied: only a client something can be
    /// delivered to subscribes (the commands are noscript, and the AOF never holds them).
    /// </summary>
    private static ClientSubscriptions? SubscriptionsOf(ref CommandContext c)
    {
        if (c.Client.PubSub is { } subscriptions)
            return subscriptions;
        c.Error($"ERR Can't execute '{c.Spec.FullName}': this client cannot subscribe");
        return null;
    }

    private static void Subscribe(ref CommandContext c, bool patterns)
    {
        if (SubscriptionsOf(ref c) is not { } subscriptions)
            return;
        for (int i = 1; i < c.ArgCount; i++)
        {
            byte[] name = c.Arg(i).ToArray();
            subscriptions.Add(name, patterns);
            SubscriptionReply(ref c, patterns ? "psubscribe"u8 : "subscribe"u8, name, subscriptions.Count);
        }
        c.Client.Class = ClientClass.PubSub;
    }

    private static void Unsubscribe(ref CommandContext c, bool patterns)
    {
        if (SubscriptionsOf(ref c) is not { } subscriptions)
            return;
        if (c.ArgCount == 1)
        {
            byte[][] names = subscriptions.Names(patterns);
            if (names.Length == 0)
            {
                c.Reply.PushHeader(3);
                c.Reply.Bulk(patterns ? "punsubscribe"u8 : "unsubscribe"u8);
                c.Reply.Null();
                c.Reply.Integer(subscriptions.Count);
            }
            foreach (byte[] name in names)
                UnsubscribeOne(ref c, subscriptions, name, patterns);
        }
        else
        {
            for (int i = 1; i < c.ArgCount; i++)
                UnsubscribeOne(ref c, subscriptions, c.Arg(i).ToArray(), patterns);
        }
        if (subscriptions.Count == 0)
            c.Client.Class = ClientClass.Normal;
    }

    /// <summary>
    /// The reply is a boundary: the registry stops pushing for the channel before it is written,
    /// and what was queued while the subscription lasted goes out ahead of it.
    /// </summary>
    private static void UnsubscribeOne(ref CommandContext c, ClientSubscriptions subscriptions, byte[] name, bool patterns)
    {
        subscriptions.Remove(name, patterns);
        c.Client.BeforeUnsubscribeReply();
        SubscriptionReply(ref c, patterns ? "punsubscribe"u8 : "unsubscribe"u8, name, subscriptions.Count);
    }

    private static void SubscriptionReply(ref CommandContext c, ReadOnlySpan<byte> kind, ReadOnlySpan<byte> name, int count)
    {
        c.Reply.PushHeader(3);
        c.Reply.Bulk(kind);
        c.Reply.Bulk(name);
        c.Reply.Integer(count);
    }

    private static void Publish(ref CommandContext c) => c.Reply.Integer(c.Server.PubSub.Publish(c.Arg(1), c.Arg(2)));

    private static void Channels(ref CommandContext c)
    {
        if (c.ArgCount > 3)
        {
            c.Error(Errors.WrongArity("pubsub|channels"));
            return;
        }
        var channels = c.Server.PubSub.Channels(c.ArgCount == 3 ? c.Arg(2) : default, all: c.ArgCount == 2);
        c.Reply.ArrayHeader(channels.Count);
        foreach (byte[] channel in channels)
            c.Reply.Bulk(channel);
    }

    private static void NumSub(ref CommandContext c)
    {
        // A flat array in both protocols, as Redis 7 replies.
        c.Reply.ArrayHeader((c.ArgCount - 2) * 2L);
        for (int i = 2; i < c.ArgCount; i++)
        {
            c.Reply.Bulk(c.Arg(i));
            c.Reply.Integer(c.Server.PubSub.SubscriberCount(c.Arg(i)));
        }
    }

    private static void NumPat(ref CommandContext c) => c.Reply.Integer(c.Server.PubSub.PatternCount);

    private static void Help(ref CommandContext c) => HelpReply.Write(c.Reply,
    [
        "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANNELS [<pattern>]", "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT", "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]", "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "HELP", "    Print this help.",
    ]);
}
