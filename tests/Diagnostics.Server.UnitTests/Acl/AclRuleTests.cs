using Diagnostics.Server.Acl;
using Diagnostics.Server.Commands;

namespace Diagnostics.Server.UnitTests.Acl;

/// <summary>
/// ACL rules applied to users, and the users described back as ACL LIST writes them: each
/// expected line and error below is what redis-server 7.0.15 answered to the same ACL SETUSER
/// (the side-by-side test over RESP comes with the ACL command itself).
/// </summary>
public sealed class AclRuleTests
{
    private static readonly CommandTable Table = new();

    private static AclUser Set(params string[] rules)
    {
        var (user, error) = AclUser.Create("u", Table).WithRules(rules);
        Assert.True(error is null, error);
        return user!;
    }

    private static string Error(params string[] rules) => AclUser.Create("u", Table).WithRules(rules).Error!;

    [Fact]
    public void TheDefaultUserIsDescribedAsRedisDescribesIt()
        => Assert.Equal("user default on nopass ~* &* +@all", AclUser.CreateDefault(Table).Describe());

    [Fact]
    public void RulesAreDescribedByWhatTheyAllowNotAsGiven()
    {
        Assert.Equal("user u on #f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a ~app:* %R~ro:* resetchannels &news.* -@all +set",
            Set("on", ">p1", "~app:*", "%R~ro:*", "&news.*", "+get", "+set", "-get").Describe());
        // Single-command rules follow this server's command table; Redis lists them in its hash
        // table's order (here "-debug -flushall"): the same rules, another order.
        Assert.Equal("user u off resetchannels +@all -flushall -debug", Set("+@all", "-debug", "-flushall").Describe());
        Assert.Equal("user u off ~* resetchannels -@all +select|0 (~w:* resetchannels -@all +set)", Set("+select|0", "allkeys", "(+set ~w:*)").Describe());
        Assert.Equal("user u off sanitize-payload resetchannels -@all", Set("reset").Describe());
    }

    [Fact]
    public void ASelectorMaySpanArguments()
        => Assert.Equal("user u off resetchannels -@all (~x resetchannels -@all +get)", Set("(+get", "~x)").Describe());

    [Fact]
    public void RefusedRulesAnswerInRedisWords()
    {
        Assert.Equal("Error in ACL SETUSER modifier '<...': The password you are trying to remove from the user does not exist", Error("<nope"));
        Assert.Equal("Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters", Error("#abc"));
        Assert.Equal("Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL", Error("+nosuch"));
        Assert.Equal("Error in ACL SETUSER modifier 'bogus': Syntax error", Error("bogus"));
        Assert.Equal("Error in ACL SETUSER modifier '~x': Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns",
            Error("~*", "~x"));
        Assert.Equal("Error in ACL SETUSER modifier '%X~a': Syntax error", Error("%X~a"));
        Assert.Equal("Error in ACL SETUSER modifier '-select|0': Unknown command or category name in ACL", Error("-select|0"));
        Assert.Equal("Unmatched parenthesis in acl selector starting at '(+get'.", Error("(+get"));
    }

    [Fact]
    public void ARefusedRuleLeavesTheUserAsItWas()
    {
        var user = Set("on", "+get");
        var (changed, error) = user.WithRules(["+set", "+nosuch"]);
        Assert.Null(changed);
        Assert.NotNull(error);
        Assert.Equal("user u on resetchannels -@all +get", user.Describe());
    }

    [Theory]
    [InlineData("+@read", "-@dangerous", "+client|list")]
    [InlineData("+@all", "-@write", "+set", "-config|set")]
    [InlineData("+@string", "+@hash", "-hset", "+@admin")]
    [InlineData("-@all", "+@stream", "-xadd", "+xinfo|stream")]
    public void TheCommandDescriptionRebuildsTheSameCommands(params string[] rules)
    {
        var user = Set(rules);
        string described = user.Root.DescribeCommands();
        var rebuilt = Set(described.Split(' '));
        foreach (var spec in Table.AllSpecs)
            Assert.True(user.Root.Allows(spec) == rebuilt.Root.Allows(spec), $"{spec.FullName} differs after '{described}'");
    }

    [Fact]
    public void PasswordsAreCheckedAgainstTheirDigests()
    {
        var user = Set("on", ">first", "#" + AclUser.Digest("second"));
        Assert.True(user.Accepts("first"u8));
        Assert.True(user.Accepts("second"u8));
        Assert.False(user.Accepts("third"u8));
        Assert.DoesNotContain("first", user.Describe());
        Assert.True(Set("nopass").Accepts("anything"u8));
        Assert.False(Set(">x", "resetpass").Accepts("x"u8));
    }

    [Fact]
    public void KeyAndChannelPatternsGrantWhatTheySay()
    {
        var user = Set("~app:*", "%R~ro:*", "%W~wo:*", "&news.*");
        var root = user.Root;
        Assert.True(root.AllowsKey("app:1"u8, read: true, write: true));
        Assert.True(root.AllowsKey("ro:1"u8, read: true, write: false));
        Assert.False(root.AllowsKey("ro:1"u8, read: false, write: true));
        Assert.True(root.AllowsKey("wo:1"u8, read: false, write: true));
        Assert.False(root.AllowsKey("other"u8, read: true, write: false));
        Assert.True(root.AllowsChannel("news.tech"u8, isPattern: false));
        Assert.True(root.AllowsChannel("news.*"u8, isPattern: true));
        Assert.False(root.AllowsChannel("news.t*"u8, isPattern: true));
        Assert.Equal("~app:* %R~ro:* %W~wo:*", root.DescribeKeys());
    }
}
