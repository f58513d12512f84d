using Diagnostics.Contracts;
using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

/// <summary>
/// An application refused by its ACL rules, as the doctor sees it live and from a debug package:
/// the finding names the user, what it is refused and where the calls come from, from ACL LOG,
/// and the rule that would allow it. A few refusals (someone trying a command by hand) are none.
/// </summary>
public sealed class DoctorAclTests
{
    [Fact]
    public void AnApplicationRefusedByItsRulesIsNamedWithWhatItLacks()
    {
        using var server = ServerProcess.Start("--user", "app on >app-pw-8 ~app:* +@read +@write +client|setname -flushall");
        using var app = server.Connect();
        RespAssert.Ok(app.Call("AUTH", "app", "app-pw-8"));
        RespAssert.Ok(app.Call("CLIENT", "SETNAME", "checkout"));
        for (int i = 0; i < 3; i++)
            Assert.StartsWith("NOPERM", app.Call("FLUSHALL").Text);
        DoctorProbe.AssertAbsent(server, "acl-denials");

        // A deployment that writes outside its key pattern: every call refused.
        for (int i = 0; i < 40; i++)
            Assert.Equal("NOPERM this user has no permissions to access one of the keys used as arguments", app.Call("SET", "orders:" + i, "x").Text);
        var (live, offline) = LiveAndOffline.Expect(server, "acl-denials", f => f.Evidence.ContainsKey("entry_0"));
        foreach (var finding in new[] { live, offline })
        {
            Assert.Equal(FindingSeverity.Warning, finding.Severity);
            Assert.Equal("security", finding.Area);
            Assert.Equal(MetricNames.AclDeniedPerSecond, finding.Chart);
            Assert.True(int.Parse(finding.Evidence["denied_last_minute"]) >= 10, finding.Seen);
            Assert.Contains("user 'app' refused 40 calls on 40 keys such as 'orders:39', 'orders:38' (toplevel, last from 127.0.0.1:", finding.Seen);
            Assert.Contains("user 'app' refused 'flushall' 3x (toplevel, last from 127.0.0.1:", finding.Seen);
            Assert.Equal("user=app,reason=key,objects=40,example=orders:39,context=toplevel,count=40", finding.Evidence["entry_0"]);
            Assert.Contains("ACL SETUSER app ~<pattern>", finding.Advice);
            Assert.Equal("3", finding.Evidence["acl_access_denied_cmd"]);
            Assert.Equal("40", finding.Evidence["acl_access_denied_key"]);
        }
        using var admin = server.Connect();
        Assert.Equal("40", InfoFields.Get(admin, "stats", "acl_access_denied_key"));
        RespAssert.Ok(admin.Call("CONFIG", "RESETSTAT"));
        Assert.Equal("0", InfoFields.Get(admin, "stats", "acl_access_denied_key"));
    }
}
