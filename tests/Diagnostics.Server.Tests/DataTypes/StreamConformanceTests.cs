using System.Text.RegularExpressions;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests.DataTypes;

/// <summary>
/// Stream commands sent to this server and to the real redis-server side by side in RESP2 and
/// RESP3, every reply compared: adding (explicit and partial IDs), ranges, trimming exact and
/// approximate (node boundaries as Redis's), deletion, XSETID, XREAD, consumer groups with their
/// pending entries, claims, lag counters and XINFO. A line marked "@" shows clock readings (idle
/// times, delivery and seen times): those numbers are masked before comparing.
/// </summary>
public sealed partial class StreamConformanceTests
{
    public static IEnumerable<object[]> Scripts => Conformance.Keys.Select(name => new object[] { name });

    [Theory]
    [MemberData(nameof(Scripts))]
    public void RepliesMatchRedis(string script)
    {
        string[] lines = Conformance[script];
        bool[] timed = [.. lines.Select(line => line.StartsWith('@'))];
        string[][] commands = [.. lines.Select((line, i) => (timed[i] ? line[1..] : line).Split(' '))];
        SideBySideReplies.AssertSame(commands, c => RespAssert.Ok(c.Call("FLUSHALL")), (i, reply) => timed[i] ? MaskClock(reply.ToString()) : reply.ToString());
    }

    /// <summary>Unix-ms timestamps, idle times after "idle", and XPENDING's idle column.</summary>
    private static string MaskClock(string reply)
    {
        reply = Timestamp().Replace(reply, ":T");
        reply = IdleField().Replace(reply, "$1:*");
        return PendingIdle().Replace(reply, "$1:*");
    }

    [GeneratedRegex(@":\d{12,}")]
    private static partial Regex Timestamp();

    [GeneratedRegex(@"(\$idle, ):\d+")]
    private static partial Regex IdleField();

    [GeneratedRegex(@"(\*\[\$\d+-\d+, \$[^,\]]+, ):\d+")]
    private static partial Regex PendingIdle();

    private static readonly Dictionary<string, string[]> Conformance = new()
    {
        ["add-and-range"] =
        [
            "XADD s 1-1 a 1", "XADD s 1-2 a 2 b 3", "XADD s 1-2 x y", "XADD s 1-1 x y", "XADD s 0-0 x y", "XADD s 0 x y",
            "XADD s 2-* f v", "XADD s 2-* f v", "XADD s 1-* f v", "XADD s 5 only", "XADD s 6 f", "XADD s 6-1", "XADD s",
            "XADD s 7-x f v", "XADD s -1 f v", "XADD s 18446744073709551615-18446744073709551615 f v", "XADD s 18446744073709551615-* f v",
            "XADD s2 18446744073709551615-18446744073709551615 f v", "XADD s2 * f v", "XADD s2 18446744073709551615-* f v",
            "XLEN s", "XLEN nokey", "XRANGE s - +", "XRANGE s 1 1", "XRANGE s 1-2 +", "XRANGE s (1-1 (2-1", "XRANGE s - + COUNT 2",
            "XRANGE s - + COUNT 0", "XRANGE s - + COUNT -1", "XRANGE s - + COUNT x", "XRANGE s - + FOO", "XRANGE s - + COUNT",
            "XRANGE s (18446744073709551615-18446744073709551615 +", "XRANGE s - (0-0", "XRANGE s x +", "XRANGE s ( +", "XRANGE s (- +",
            "XRANGE nokey - +", "XREVRANGE s + -", "XREVRANGE s + - COUNT 1", "XREVRANGE s (5 (1-1", "XREVRANGE s 2 1", "XRANGE s 3 2",
            "XADD n 1-1 num 12345 neg -7 big 99999999999999999999 f 1.5", "XRANGE n - +", "XADD n 1-2 num 1 neg 2 big 3 f 4",
            "XADD n 1-3 other 1", "XRANGE n - +", "XREVRANGE n + -", "SET str v", "XADD str 1-1 a 1", "XRANGE str - +", "XLEN str",
            "XADD s NOMKSTREAM 9-9 a 1", "XADD nope NOMKSTREAM 1-1 a 1", "EXISTS nope", "XADD nope NOMKSTREAM * a 1", "TYPE s", "OBJECT ENCODING s",
        ],
        ["trim"] =
        [
            "XADD t 1 a 1", "XADD t 2 a 1", "XADD t 3 a 1", "XADD t 4 a 1", "XADD t 5 a 1", "XTRIM t MAXLEN 3", "XRANGE t - +",
            "XTRIM t MAXLEN = 10", "XTRIM t MINID 4", "XRANGE t - +", "XTRIM t MINID = (5", "XTRIM t MAXLEN ~ 0", "XLEN t",
            "XTRIM t MAXLEN -1", "XTRIM t MAXLEN x", "XTRIM t MINID x", "XTRIM t", "XTRIM t FOO 1", "XTRIM t MAXLEN 1 MINID 1",
            "XTRIM t MAXLEN 1 LIMIT 10", "XTRIM t MAXLEN ~ 1 LIMIT -1", "XTRIM t MAXLEN ~ 1 LIMIT x", "XTRIM nokey MAXLEN x",
            "XTRIM t LIMIT 1", "XADD t MAXLEN 2 6 a 1", "XADD t MAXLEN 2 7 a 1", "XRANGE t - +", "XADD t MINID 7 8 a 1", "XRANGE t - +",
            "XADD t MAXLEN ~ 1 LIMIT 5 9 a 1", "XADD t LIMIT 5 10 a 1", "XADD t MAXLEN 1 LIMIT 5 10 a 1", "XADD t MAXLEN -2 10 a 1",
            "XADD t MAXLEN 1 MINID 1 10 a 1", "XLEN t", "SET str v", "XTRIM str MAXLEN 1",
        ],
        ["delete-and-setid"] =
        [
            "XADD d 1 a 1", "XADD d 2 a 1", "XADD d 3 a 1", "XDEL d 2 9", "XDEL d 2", "XDEL d x", "XDEL d 1 x", "XLEN d",
            "XDEL nokey 1", "XINFO STREAM d", "XDEL d 1 3", "XLEN d", "XINFO STREAM d", "XRANGE d - +", "EXISTS d",
            "XADD d 4 a 1", "XSETID d 3", "XSETID d 10", "XSETID d 10 ENTRIESADDED 1", "XSETID d 10 ENTRIESADDED 9 MAXDELETEDID 5",
            "XSETID d 20 MAXDELETEDID 30", "XSETID d 4 MAXDELETEDID 1", "XSETID d 11 ENTRIESADDED -1", "XSETID d 11 FOO",
            "XSETID d x", "XSETID nokey 1", "XINFO STREAM d", "XADD d 10 a 1", "XADD d 11 a 1", "SET str v", "XSETID str 1",
            "XADD e 1 a 1", "XDEL e 1", "XINFO STREAM e", "XSETID e 0 MAXDELETEDID 0", "XSETID e 0-1", "XADD e 0-2 a 1",
        ],
        ["read"] =
        [
            "XADD r 1 a 1", "XADD r 2 b 2", "XADD q 5 c 3", "XREAD STREAMS r 0", "XREAD COUNT 1 STREAMS r q 0 0", "XREAD STREAMS r q $ 4",
            "XREAD STREAMS r q 2 5", "XREAD STREAMS r nokey 0 0", "XREAD STREAMS nokey 0", "XREAD STREAMS r", "XREAD STREAMS r q 0",
            "XREAD COUNT x STREAMS r 0", "XREAD COUNT -5 STREAMS r 0", "XREAD FOO STREAMS r 0", "XREAD STREAMS r x", "XREAD STREAMS r >",
            "XREAD GROUP g c STREAMS r 0", "XREAD NOACK STREAMS r 0", "XREAD BLOCK x STREAMS r 0", "XREAD BLOCK -1 STREAMS r 0",
            "XREAD BLOCK 10 STREAMS r 0", "XREAD BLOCK 10 STREAMS r $", "XREAD COUNT 1", "SET str v", "XREAD STREAMS r str 0 0",
            "MULTI", "XREAD BLOCK 0 STREAMS r $", "EXEC", "MULTI", "XADD r 9 in multi", "XREAD STREAMS r 8", "EXEC",
            "COMMAND GETKEYS XREAD COUNT 1 BLOCK 5 STREAMS a b 0 0", "COMMAND GETKEYS XREADGROUP GROUP g c NOACK STREAMS a >",
            "COMMAND GETKEYS XREAD STREAMS a b 0", "COMMAND GETKEYS XGROUP CREATE k g 0", "COMMAND GETKEYS XINFO STREAM k",
        ],
        ["groups"] =
        [
            "XGROUP CREATE g grp 0", "XGROUP CREATE g grp 0 MKSTREAM", "XGROUP CREATE g grp 0 MKSTREAM", "TYPE g", "XLEN g",
            "XADD g 1 a 1", "XADD g 2 b 2", "XADD g 3 c 3", "XGROUP CREATE g late $", "XGROUP CREATE g x 0 ENTRIESREAD 2",
            "XGROUP CREATE g y 0 ENTRIESREAD -2", "XGROUP CREATE g y 0 ENTRIESREAD x", "XGROUP CREATE g y 0 FOO", "XGROUP CREATE g y bad",
            "XGROUP CREATE g y 0 MKSTREAM ENTRIESREAD 1 X", "XINFO GROUPS g", "XREADGROUP GROUP grp alice COUNT 1 STREAMS g >",
            "XREADGROUP GROUP grp bob STREAMS g >", "XREADGROUP GROUP grp bob STREAMS g >", "XREADGROUP GROUP grp alice STREAMS g 0",
            "XREADGROUP GROUP grp alice STREAMS g 1", "XREADGROUP GROUP grp nobody STREAMS g 0", "XREADGROUP GROUP nogrp alice STREAMS g >",
            "XREADGROUP GROUP grp alice STREAMS nokey >", "XREADGROUP GROUP grp alice STREAMS g $", "XREADGROUP STREAMS g >",
            "XREADGROUP GROUP grp alice STREAMS g", "XREADGROUP GROUP grp alice NOACK STREAMS g 0", "@XINFO GROUPS g", "@XINFO CONSUMERS g grp",
            "XPENDING g grp", "@XPENDING g grp - + 10", "@XPENDING g grp - + 10 bob", "XPENDING g grp - + 10 nobody", "XPENDING g grp - + 0",
            "@XPENDING g grp (1 + 10", "@XPENDING g grp IDLE 0 - + 10", "XPENDING g grp IDLE 99999999 - + 10", "XPENDING g grp - +",
            "XPENDING g grp x + 10", "XPENDING g grp - + x", "XPENDING g grp IDLE x - + 10", "XPENDING g grp IDLE 1 - +", "XPENDING g nogrp",
            "XPENDING nokey grp", "XACK g grp 1 9", "XACK g grp 1", "XACK g grp x", "XACK g nogrp 2", "XACK nokey grp 2", "XPENDING g grp",
            "XDEL g 2", "XREADGROUP GROUP grp bob STREAMS g 0", "XGROUP SETID g grp 0", "XREADGROUP GROUP grp carol STREAMS g >",
            "@XPENDING g grp - + 10 carol", "XGROUP SETID g grp $ ENTRIESREAD 3", "XGROUP SETID g nogrp 0", "XGROUP SETID g grp x",
            "XGROUP SETID g grp 0 ENTRIESREAD", "XGROUP CREATECONSUMER g grp dave", "XGROUP CREATECONSUMER g grp dave",
            "XGROUP CREATECONSUMER g nogrp dave", "XGROUP DELCONSUMER g grp carol", "XGROUP DELCONSUMER g grp nobody", "XPENDING g grp",
            "XGROUP DESTROY g late", "XGROUP DESTROY g late", "XGROUP DESTROY nokey late", "XGROUP FOO g grp", "XGROUP CREATE nokey grp 0",
            "XINFO GROUPS g", "SET str v", "XGROUP CREATE str grp 0", "XREADGROUP GROUP grp alice STREAMS str >",
            // One key named twice: the second read starts where the first left the group.
            "XGROUP CREATE g twice 0", "XREADGROUP GROUP twice a COUNT 1 STREAMS g g > >", "XREADGROUP GROUP twice a STREAMS g g > >",
            "XREADGROUP GROUP twice a STREAMS g g > >", "XADD g 9 z 9", "XREADGROUP GROUP twice a STREAMS g g 0 >", "XREAD STREAMS g g 0 2",
        ],
        ["lag"] =
        [
            "XADD l 1 a 1", "XADD l 2 a 1", "XADD l 3 a 1", "XADD l 4 a 1", "XGROUP CREATE l g1 0", "XGROUP CREATE l g2 $",
            "XGROUP CREATE l g3 2", "XINFO GROUPS l", "XREADGROUP GROUP g1 c COUNT 2 STREAMS l >", "XINFO GROUPS l", "XDEL l 3",
            "XINFO GROUPS l", "XREADGROUP GROUP g1 c STREAMS l >", "XINFO GROUPS l", "XDEL l 1", "XINFO GROUPS l", "XTRIM l MAXLEN 1",
            "XINFO GROUPS l", "XADD l 5 a 1", "XINFO GROUPS l", "XGROUP SETID l g3 0", "XINFO GROUPS l", "XGROUP SETID l g3 4 ENTRIESREAD 4",
            "XINFO GROUPS l", "XSETID l 9 ENTRIESADDED 20", "XINFO GROUPS l", "XGROUP CREATE l g4 0 ENTRIESREAD 3", "XINFO GROUPS l",
        ],
        ["claim"] =
        [
            "XADD c 1 a 1", "XADD c 2 b 2", "XADD c 3 c 3", "XGROUP CREATE c g 0", "XREADGROUP GROUP g alice STREAMS c >",
            "XCLAIM c g bob 0 1 2", "@XPENDING c g - + 10", "XCLAIM c g bob 0 1 JUSTID", "XCLAIM c g bob 0 1 RETRYCOUNT 7 JUSTID",
            "@XPENDING c g - + 10", "XCLAIM c g bob 99999999 3", "XCLAIM c g carol 0 9", "XCLAIM c g carol 0 9 FORCE", "XDEL c 2",
            "XCLAIM c g carol 0 2 3", "@XPENDING c g - + 10", "XCLAIM c g carol 0 1 FORCE JUSTID LASTID 5", "XINFO GROUPS c",
            "XCLAIM c g carol 0 1 IDLE x", "XCLAIM c g carol 0 1 TIME x", "XCLAIM c g carol 0 1 RETRYCOUNT x", "XCLAIM c g carol 0 1 LASTID x",
            "XCLAIM c g carol 0 1 BOGUS", "XCLAIM c g carol x 1", "XCLAIM c nogrp carol 0 1", "XCLAIM nokey g carol 0 1",
            "XCLAIM c g carol -5 1 IDLE 0 TIME 0", "@XCLAIM c g dave 0 1 3 JUSTID", "@XINFO CONSUMERS c g",
            "XADD a 1 a 1", "XADD a 2 b 2", "XADD a 3 c 3", "XADD a 4 d 4", "XGROUP CREATE a g 0", "XREADGROUP GROUP g alice STREAMS a >",
            "XAUTOCLAIM a g bob 0 0 COUNT 2", "XAUTOCLAIM a g bob 0 0 COUNT 2 JUSTID", "XAUTOCLAIM a g bob 0 3", "XDEL a 2 3",
            "XAUTOCLAIM a g carol 0 0", "@XPENDING a g - + 10", "XAUTOCLAIM a g carol 0 (1", "XAUTOCLAIM a g carol 99999999 0",
            "XAUTOCLAIM a g carol 0 0 COUNT 0", "XAUTOCLAIM a g carol 0 0 COUNT x", "XAUTOCLAIM a g carol 0 0 FOO", "XAUTOCLAIM a g carol x 0",
            "XAUTOCLAIM a g carol 0 x", "XAUTOCLAIM a nogrp carol 0 0", "XAUTOCLAIM nokey g carol 0 0", "XAUTOCLAIM a g carol 0 0 COUNT",
        ],
        ["info"] =
        [
            "XADD i 1 a 1", "XADD i 2 a 2", "XADD i 3 b 3 c 4", "XGROUP CREATE i g 0", "XREADGROUP GROUP g c1 COUNT 1 STREAMS i >",
            "XREADGROUP GROUP g c2 STREAMS i >", "XINFO STREAM i", "@XINFO STREAM i FULL", "@XINFO STREAM i FULL COUNT 1",
            "@XINFO STREAM i FULL COUNT 0", "@XINFO STREAM i FULL COUNT -3", "XINFO STREAM i FULL COUNT x", "XINFO STREAM i FULL COUNT",
            "XINFO STREAM i FOO", "XINFO STREAM i FULL FOO 1", "XINFO STREAM nokey", "XINFO GROUPS nokey", "XINFO CONSUMERS i nogrp",
            "XINFO CONSUMERS nokey g", "XINFO FOO i", "XINFO", "XINFO HELP", "XGROUP HELP", "XINFO HELP x", "SET str v", "XINFO STREAM str",
            "XGROUP CREATE e g 0 MKSTREAM", "XINFO STREAM e", "XINFO STREAM e FULL",
            // A copy is independent: groups, consumers and pending entries included.
            "COPY i i2", "@XINFO STREAM i2 FULL", "XGROUP DESTROY i g", "XDEL i 1", "@XINFO STREAM i2 FULL", "XINFO STREAM i",
            "RENAME i2 i3", "XLEN i3", "OBJECT ENCODING i3", "TYPE i3", "XADD i3 9 z 9", "XREADGROUP GROUP g c3 STREAMS i3 >",
            "@XINFO CONSUMERS i3 g", "DEL i3", "EXISTS i3",
        ],
    };
}
