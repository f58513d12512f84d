using Diagnostics.Fuzz.Harness;
using Diagnostics.Server.Acl;
using Diagnostics.Server.Commands;

namespace Diagnostics.Fuzz.Targets;

/// <summary>
/// The ACL rule language from outside the process (an aclfile, ACL SETUSER's arguments): the input
/// is loaded as an ACL file, and each of its lines applied as SETUSER rules. Neither documents an
/// exception: a bad line or rule must come back as an error. A user that was accepted must
/// describe itself as rules that rebuild the same commands, keys and channels, except where
/// redis-server 7.0 cannot either: a selector whose last pattern ends in ')' (SETUSER "(~))" is
/// described as "(~) ... -@all)", which no longer parses as that selector), compared side by side.
/// </summary>
public sealed class AclTarget : IFuzzTarget
{
    private static readonly CommandTable Commands = new();

    public string Name => "acl";

    public void Run(ReadOnlySpan<byte> input)
    {
        string path = Path.Combine(Sandbox.Folder, "users.acl");
        File.WriteAllBytes(path, input.ToArray());
        new AclUsers(Commands, requirePass: null).LoadFile(path);

        foreach (string line in File.ReadAllLines(path))
        {
            string[] words = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (words.Length == 0)
                continue;
            var (user, _) = AclUser.Create("fuzz", Commands).WithRules(words);
            if (user is null || EndsAPatternWithAParenthesis(user))
                continue;
            string described = user.Describe();
            var (rebuilt, error) = AclUser.Create("fuzz", Commands).WithRules(described.Split(' ')[2..], wrap: false);
            if (rebuilt is null)
                throw new InvalidOperationException($"'{described}' does not rebuild: {error}");
            if (rebuilt.Describe() != described)
                throw new InvalidOperationException($"'{described}' rebuilds as '{rebuilt.Describe()}'");
        }
    }

    private static bool EndsAPatternWithAParenthesis(AclUser user)
    {
        for (int i = 1; i < user.Selectors.Count; i++)
        {
            foreach (var key in user.Selectors[i].Keys)
                if (key.Text.EndsWith(')'))
                    return true;
            foreach (string channel in user.Selectors[i].Channels)
                if (channel.EndsWith(')'))
                    return true;
        }
        return false;
    }
}
