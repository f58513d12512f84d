using Diagnostics.Contracts;
using Diagnostics.Doctor;

namespace Diagnostics.Server.Tests;

/// <summary>
/// The acl-denials rule: a spike of refusals names ACL LOG's entries refused within the window,
/// most refusals first; older entries and failed logins (the auth-failures rule's) are not named.
/// </summary>
public sealed class AclDenialsRuleTests
{
    private const long Now = 1_795_000_000_000;

    [Fact]
    public void TheEntriesRefusedWithinTheMinuteAreNamedMostFirst()
    {
        var finding = Assert.Single(Examine(6, [
            new AclLogRecord(500, "command", "toplevel", "flushall", "old", "id=1 addr=10.0.0.1:1", Now - 600_000, Now - 300_000),
            new AclLogRecord(9, "auth", "toplevel", "AUTH", "app", "id=2 addr=10.0.0.2:2", Now - 1000, Now - 1000),
            new AclLogRecord(4, "channel", "multi", "news", "app", "id=3 addr=10.0.0.3:3 laddr=10.0.0.9:6379", Now - 5000, Now - 2000),
            new AclLogRecord(30, "command", "lua", "config|set", "jobs", "id=4 addr=10.0.0.4:4", Now - 9000, Now - 1000),
        ]).Findings, f => f.Rule == "acl-denials");
        Assert.Equal("user=jobs,reason=command,object=config|set,context=lua,count=30", finding.Evidence["entry_0"]);
        Assert.Equal("user=app,reason=channel,objects=1,example=news,context=multi,count=4", finding.Evidence["entry_1"]);
        Assert.False(finding.Evidence.ContainsKey("entry_2"));
        Assert.Contains("user 'jobs' refused 'config|set' 30x (lua, last from 10.0.0.4:4); user 'app' refused 4 calls on 1 channel such as 'news' (multi, last from 10.0.0.3:3)", finding.Seen);
        Assert.Contains("ACL SETUSER jobs +config|set", finding.Advice);
        Assert.Equal("12", finding.Evidence["denied_last_minute"]);
    }

    [Fact]
    public void KeysRefusedToAUserAreOneProblemHoweverManyTheyAre()
    {
        var keys = Enumerable.Range(0, 20).Select(i => new AclLogRecord(1, "key", "toplevel", "orders:" + i, "app", "id=7 addr=10.0.0.5:41000", Now - 1000 + i, Now - 1000 + i)).ToList();
        keys.Add(new AclLogRecord(5, "command", "toplevel", "flushall", "app", "id=7 addr=10.0.0.5:41000", Now - 500, Now - 500));
        var finding = Assert.Single(Examine(10, keys).Findings, f => f.Rule == "acl-denials");
        Assert.Equal("user=app,reason=key,objects=20,example=orders:19,context=toplevel,count=20", finding.Evidence["entry_0"]);
        Assert.Contains("user 'app' refused 20 calls on 20 keys such as 'orders:19', 'orders:18' (toplevel, last from 10.0.0.5:41000); user 'app' refused 'flushall' 5x", finding.Seen);
        Assert.Contains("give it their pattern (ACL SETUSER app ~<pattern>)", finding.Advice);
    }

    [Fact]
    public void FewRefusalsAreNoFinding()
        => Assert.DoesNotContain(Examine(4, []).Findings, f => f.Rule == "acl-denials");

    /// <summary>Two one-second samples of <paramref name="perSecond"/> refusals a second each, with <paramref name="log"/> as ACL LOG.</summary>
    private static DoctorReport Examine(double perSecond, IReadOnlyList<AclLogRecord> log)
    {
        var history = new MetricHistory
        {
            IntervalMillis = 1000,
            Times = [Now - 2000, Now],
            Series = new()
            {
                [MetricNames.AclDeniedPerSecond] = [perSecond, perSecond],
                [MetricNames.SampleIntervalSeconds] = [1, 1],
            },
        };
        return DoctorRules.Examine(new DoctorInput { TakenUnixMs = Now, History = history, AclLog = log });
    }
}
