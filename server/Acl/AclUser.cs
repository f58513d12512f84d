using System.Security.Cryptography;
using System.Text;
using Diagnostics.Server.Commands;

namespace Diagnostics.Server.Acl;

/// <summary>
/// One ACL user: on or off, its passwords (SHA-256 digests only, as Redis keeps them), and its
/// selectors, the root one first. Immutable: ACL SETUSER builds a changed copy from all its rules
/// and swaps it in only if every rule was valid, so a half-applied SETUSER never exists and a
/// command checking permissions never sees one changing.
/// </summary>
public sealed class AclUser
{
    private AclUser(string name, AclSelector root)
    {
        Name = name;
        Selectors = [root];
    }

    public string Name { get; }
    public bool Enabled { get; private set; }
    public bool NoPass { get; private set; }
    /// <summary>
    /// sanitize-payload / skip-sanitize-payload, or neither (the default, which sanitize-dump-payload
    /// decides): accepted and reported; this server checks every RESTORE payload in full.
    /// </summary>
    public bool? SanitizePayload { get; private set; }
    /// <summary>Lower-case hex SHA-256 of each password.</summary>
    public List<string> Passwords { get; private set; } = [];
    /// <summary>The root selector first, then those added with (...), in order.</summary>
    public List<AclSelector> Selectors { get; private set; }
    public AclSelector Root => Selectors[0];

    /// <summary>Every command, key and channel: nothing to check per command. Read once the user is built (it never changes after).</summary>
    public bool Unrestricted => _unrestricted ??= Root.AllowsEverything();
    private bool? _unrestricted;

    /// <summary>
    /// A digest of what logs this user in (nopass and the password digests): an HTTP session
    /// keeps it and ends when it changes, as after resetpass or a new password.
    /// </summary>
    public string CredentialStamp => _credentialStamp ??= Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes(
        $"{Name}\n{(NoPass ? "nopass" : "")}\n{string.Join(',', Passwords)}")))[..32];
    private string? _credentialStamp;

    /// <summary>A new user as ACL SETUSER creates one: off, no password, no commands, keys or channels.</summary>
    public static AclUser Create(string name, CommandTable commands) => new(name, new AclSelector(commands));

    /// <summary>
    /// Redis's default user: on, nopass, every command, key and channel; requirepass then gives
    /// it a password (<see cref="WithRequirePass"/>).
    /// </summary>
    public static AclUser CreateDefault(CommandTable commands)
    {
        var user = Create("default", commands);
        foreach (string rule in (string[])["on", "nopass", "~*", "&*", "+@all"])
            user.ApplyRule(rule);
        return user;
    }

    /// <summary>requirepass as Redis maps it onto the default user: its passwords become this one, or nopass when empty.</summary>
    public AclUser WithRequirePass(string? password)
    {
        var copy = Clone();
        copy.ApplyRule("resetpass");
        copy.ApplyRule(password is null ? "nopass" : ">" + password);
        return copy;
    }

    public AclUser Clone() => new(Name, Root)
    {
        Enabled = Enabled,
        NoPass = NoPass,
        SanitizePayload = SanitizePayload,
        Passwords = [.. Passwords],
        Selectors = [.. Selectors.Select(s => s.Clone())],
    };

    /// <summary>
    /// This user with every rule applied left to right, or the first refusal in Redis's words
    /// ("Error in ACL SETUSER modifier '...': ..."); the user itself is unchanged either way.
    /// </summary>
    public (AclUser? User, string? Error) WithRules(IReadOnlyList<string> rules) => WithRules(rules, wrap: true);

    /// <param name="wrap">False: a refused rule's reason alone, as an ACL file's errors give it ("Syntax error").</param>
    public (AclUser? User, string? Error) WithRules(IReadOnlyList<string> rules, bool wrap)
    {
        var copy = Clone();
        for (int i = 0; i < rules.Count; i++)
        {
            string rule = rules[i];
            // A selector may span arguments, "(+get" "~x)", as Redis joins them.
            if (rule.StartsWith('(') && !rule.EndsWith(')'))
            {
                int end = i + 1;
                while (end < rules.Count && !rules[end].EndsWith(')'))
                    end++;
                if (end == rules.Count)
                    return (null, $"Unmatched parenthesis in acl selector starting at '{rule}'.");
                rule = string.Join(' ', rules.Skip(i).Take(end - i + 1));
                i = end;
            }
            if (copy.ApplyRule(rule) is { } problem)
                return (null, wrap ? $"Error in ACL SETUSER modifier '{Shown(rule)}': {problem}" : problem);
        }
        return (copy, null);
    }

    /// <summary>Password rules are shown without the password, as Redis shows them.</summary>
    private static string Shown(string rule) => rule.Length > 0 && rule[0] is '>' or '<' ? rule[..1] + "..." : rule;

    private string? ApplyRule(string rule)
    {
        string lower = rule.ToLowerInvariant();
        switch (lower)
        {
            case "on":
                Enabled = true;
                return null;
            case "off":
                Enabled = false;
                return null;
            case "nopass":
                NoPass = true;
                Passwords = [];
                return null;
            case "resetpass":
                NoPass = false;
                Passwords = [];
                return null;
            case "skip-sanitize-payload":
                SanitizePayload = false;
                return null;
            case "sanitize-payload":
                SanitizePayload = true;
                return null;
            case "clearselectors":
                Selectors = [Root];
                return null;
            case "reset":
                foreach (string step in (string[])["resetpass", "resetkeys", "resetchannels", "off", "-@all", "clearselectors", "sanitize-payload"])
                    ApplyRule(step);
                return null;
        }
        if (rule.Length == 0)
            return "Syntax error";
        switch (rule[0])
        {
            case '>':
                AddPassword(Digest(rule[1..]));
                return null;
            case '#':
                if (!IsDigest(rule[1..]))
                    return "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters";
                AddPassword(rule[1..]);
                return null;
            case '<':
                return RemovePassword(Digest(rule[1..]));
            case '!':
                if (!IsDigest(rule[1..]))
                    return "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters";
                return RemovePassword(rule[1..]);
            case '(':
                var selector = Root.Empty();
                foreach (string part in rule[1..^1].Split(' ', StringSplitOptions.RemoveEmptyEntries))
                    if (selector.Apply(part) is { } problem)
                        return problem;
                Selectors = [.. Selectors, selector];
                return null;
        }
        return Root.Apply(rule);
    }

    private void AddPassword(string digest)
    {
        NoPass = false;
        if (!Passwords.Contains(digest))
            Passwords = [.. Passwords, digest];
    }

    private string? RemovePassword(string digest)
    {
        if (!Passwords.Contains(digest))
            return "The password you are trying to remove from the user does not exist";
        Passwords = [.. Passwords.Where(p => p != digest)];
        return null;
    }

    /// <summary>The password is right for this user (constant time over the digests); nopass takes any.</summary>
    public bool Accepts(ReadOnlySpan<byte> password)
    {
        if (NoPass)
            return true;
        Span<byte> digest = stackalloc byte[32];
        SHA256.HashData(password, digest);
        bool found = false;
        foreach (string stored in Passwords)
            found |= CryptographicOperations.FixedTimeEquals(digest, Convert.FromHexString(stored));
        return found;
    }

    public static string Digest(string password) => Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes(password)));

    private static bool IsDigest(string text)
    {
        if (text.Length != 64)
            return false;
        foreach (char c in text)
            if (c is not (>= '0' and <= '9' or >= 'a' and <= 'f'))
                return false;
        return true;
    }

    /// <summary>The flags as ACL GETUSER lists them.</summary>
    public List<string> Flags()
    {
        var flags = new List<string> { Enabled ? "on" : "off" };
        if (NoPass)
            flags.Add("nopass");
        if (SanitizePayload is { } sanitize)
            flags.Add(sanitize ? "sanitize-payload" : "skip-sanitize-payload");
        return flags;
    }

    /// <summary>"user name on #... ~* &amp;* +@all (selector)": the user as ACL LIST and the ACL file write it.</summary>
    public string Describe()
    {
        var text = new StringBuilder("user ").Append(Name);
        foreach (string flag in Flags())
            text.Append(' ').Append(flag);
        foreach (string password in Passwords)
            text.Append(" #").Append(password);
        AppendSelector(text, Root);
        foreach (var selector in Selectors.Skip(1))
        {
            text.Append(" (");
            int start = text.Length;
            AppendSelector(text, selector);
            // The selector's own text starts with the space AppendSelector puts before each part.
            text.Remove(start, 1);
            text.Append(')');
        }
        return text.ToString();
    }

    private static void AppendSelector(StringBuilder text, AclSelector selector)
    {
        foreach (string part in (string[])[selector.DescribeKeys(), selector.DescribeChannels(), selector.DescribeCommands()])
            if (part.Length > 0)
                text.Append(' ').Append(part);
    }
}
