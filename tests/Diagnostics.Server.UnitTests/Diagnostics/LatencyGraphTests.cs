using Diagnostics.Server.Diagnostics.Latency;

namespace Diagnostics.Server.Tests;

/// <summary>
/// LATENCY GRAPH's drawing against redis-server 7.0.15's own: the samples and the graph below were
/// read from a real redis-server (LATENCY HISTORY and LATENCY GRAPH in the same second, 86 DEBUG
/// SLEEPs one second apart), so the renderer must reproduce it character for character: title,
/// rule, bars, blank row, vertical "ago" labels, and the wrap after 80 columns.
/// </summary>
public sealed class LatencyGraphTests
{
    private const long Start = 1795333362;

    // (seconds after Start, milliseconds), oldest first.
    private static readonly (long Offset, long Milliseconds)[] s_redisSamples =
    [
        (0, 11), (1, 25), (2, 40), (3, 13), (4, 60), (5, 35), (6, 18), (7, 90), (8, 22), (9, 45),
        (10, 12), (11, 70), (12, 30), (13, 15), (14, 55), (15, 20), (16, 80), (17, 28), (18, 16), (19, 50),
        (20, 11), (21, 25), (22, 40), (23, 13), (24, 60), (25, 35), (26, 18), (27, 90), (28, 22), (29, 45),
        (30, 12), (31, 70), (32, 30), (33, 15), (34, 55), (35, 20), (36, 80), (37, 28), (38, 16), (39, 50),
        (40, 11), (41, 25), (42, 40), (43, 13), (44, 60), (45, 35), (46, 18), (47, 90), (48, 22), (49, 45),
        (50, 12), (51, 70), (52, 30), (53, 15), (54, 55), (55, 20), (56, 80), (57, 28), (58, 16), (59, 50),
        (60, 11), (61, 25), (62, 40), (63, 13), (64, 60), (65, 35), (66, 18), (67, 90), (68, 22), (69, 45),
        (70, 12), (71, 70), (72, 30), (73, 15), (74, 55), (75, 20), (76, 80), (77, 28), (78, 16), (79, 50),
        (80, 11), (81, 25), (82, 40), (83, 13), (84, 60), (85, 35),
    ];

    private const string RedisGraph =
        "command - high 90 ms, low 11 ms (all time high 90 ms)\n" +
        "--------------------------------------------------------------------------------\n" +
        "       #        o          #        o          #        o          #        o   \n" +
        "    o  |   #  _ |       o  |   #  _ |       o  |   #  _ |       o  |   #  _ |   \n" +
        "  o |_ | # |  | |  #  o |_ | # |  | |  #  o |_ | # |  | |  #  o |_ | # |  | |  #\n" +
        "_#|_||o|o|_|#_|o|#_|_#|_||o|o|_|#_|o|#_|_#|_||o|o|_|#_|o|#_|_#|_||o|o|_|#_|o|#_|\n" +
        "                                                                                \n" +
        "11111111111111111111111111555555555544444444443333333333222222222211111111119876\n" +
        "mmmmmmmmmmmmmmmmmmmmmmmmmm98765432109876543210987654321098765432109876543210ssss\n" +
        "                          ssssssssssssssssssssssssssssssssssssssssssssssssss    \n" +
        "\n" +
        "      \n" +
        "    o \n" +
        "  o |_\n" +
        "_#|_||\n" +
        "      \n" +
        "543210\n" +
        "ssssss\n" +
        "";

    [Fact]
    public void RendersExactlyAsRedisServer()
    {
        var samples = s_redisSamples.Select(s => new LatencySample(Start + s.Offset, s.Milliseconds)).ToArray();
        var evt = new LatencyEventSnapshot("command", samples, samples[^1], 90);
        Assert.Equal(RedisGraph, LatencyGraph.Render(evt, Start + 85));
    }

    [Fact]
    public void OneSampleIsALowBarWithItsLabel()
    {
        var sample = new LatencySample(1_000_000, 25);
        var evt = new LatencyEventSnapshot("aof-write", [sample], sample, 40);
        string expected = "aof-write - high 25 ms, low 25 ms (all time high 40 ms)\n" + new string('-', 80) + "\n"
            + " \n \n \n_\n \n3\nh\n";
        Assert.Equal(expected, LatencyGraph.Render(evt, 1_000_000 + 3 * 3600 + 59));
    }
}
