using Diagnostics.Server.Diagnostics.History;

namespace Diagnostics.Server.Tests;

/// <summary>A replica's lag in seconds: how long the master has had the first byte the replica has not acknowledged.</summary>
public sealed class StreamTimelineTests
{
    [Fact]
    public void LagIsTheAgeOfTheFirstSampleWithBytesTheReplicaLacks()
    {
        var timeline = new StreamTimeline(10);
        for (int s = 0; s < 6; s++)
            timeline.Add(s * 1000, 100 + s * 50); // 100, 150, 200, 250, 300, 350
        Assert.Equal(0, timeline.SecondsBehind(350, 5000)); // has everything
        Assert.Equal(0, timeline.SecondsBehind(320, 5000)); // lacks only what the last second wrote
        Assert.Equal(3, timeline.SecondsBehind(160, 5000)); // 200 was there at 2 s
        Assert.Equal(5, timeline.SecondsBehind(0, 5000)); // older than the timeline: at least its length
    }

    [Fact]
    public void ANewHistoryStartsOver()
    {
        var timeline = new StreamTimeline(10);
        timeline.Add(0, 5000);
        timeline.Add(1000, 6000);
        timeline.Add(2000, 10); // a full sync adopted another master's offset
        Assert.Equal(0, timeline.SecondsBehind(10, 2000));
        Assert.Equal(0, timeline.SecondsBehind(5, 2000));
    }
}
