using Diagnostics.Server.Commands;

namespace Diagnostics.Server.Acl;

/// <summary>
/// A user's place in the registry: what clients authenticated as that user hold. ACL SETUSER
/// swaps <see cref="Current"/>, so those clients get the new permissions with their next command
/// (as in Redis, where they share the one user object); DELUSER marks it deleted.
/// </summary>
public sealed class AclUserSlot(AclUser user)
{
    private volatile AclUser _current = user;

    public string Name => _current.Name;
    public AclUser Current => _current;
    public bool Deleted { get; internal set; }

    internal void Replace(AclUser user) => _current = user;
}

/// <summary>
/// The ACL users by name (case-sensitive, listed in byte order as Redis's radix tree lists them),
/// with the default user always present. Changes come from ACL commands, requirepass and the
/// configuration; readers take the current table without a lock.
/// </summary>
public sealed class AclUsers
{
    private readonly CommandTable _commands;
    private readonly Lock _gate = new();
    private volatile SortedDictionary<string, AclUserSlot> _users;

    public AclUsers(CommandTable commands, string? requirePass)
    {
        _commands = commands;
        Default = new AclUserSlot(AclUser.CreateDefault(commands).WithRequirePass(requirePass));
        _users = new SortedDictionary<string, AclUserSlot>(StringComparer.Ordinal) { ["default"] = Default };
    }

    public AclUserSlot Default { get; }

    /// <summary>True while the default user takes any password: new connections start authenticated (and protected mode applies).</summary>
    public bool DefaultNeedsNoPassword => Default.Current is { NoPass: true, Enabled: true };

    public AclUserSlot? Find(string name) => _users.GetValueOrDefault(name);

    public IReadOnlyCollection<AclUserSlot> All => _users.Values;

    /// <summary>Creates or changes a user with all the rules or none; null on success, else Redis's error without "ERR ".</summary>
    public string? SetUser(string name, IReadOnlyList<string> rules)
    {
        lock (_gate)
        {
            var slot = _users.GetValueOrDefault(name);
            var (changed, error) = (slot?.Current ?? AclUser.Create(name, _commands)).WithRules(rules);
            if (changed is null)
                return error;
            if (slot is not null)
            {
                slot.Replace(changed);
                return null;
            }
            _users = new SortedDictionary<string, AclUserSlot>(_users, StringComparer.Ordinal) { [name] = new AclUserSlot(changed) };
            return null;
        }
    }

    /// <summary>
    /// A "user" line of the configuration: the user as its rules describe it from nothing (a
    /// default-user line replaces the built-in default), null on success or the reason.
    /// </summary>
    public string? Declare(string name, IReadOnlyList<string> rules)
    {
        var (user, error) = AclUser.Create(name, _commands).WithRules(rules, wrap: false);
        if (user is null)
            return error;
        lock (_gate)
        {
            if (_users.TryGetValue(name, out var slot))
                slot.Replace(user);
            else
                _users = new SortedDictionary<string, AclUserSlot>(_users, StringComparer.Ordinal) { [name] = new AclUserSlot(user) };
        }
        return null;
    }

    /// <summary>Removes the named users (never the default one; the caller refuses that); the slots removed, for their clients to be closed.</summary>
    public List<AclUserSlot> Delete(IEnumerable<string> names)
    {
        lock (_gate)
        {
            var removed = new List<AclUserSlot>();
            var users = new SortedDictionary<string, AclUserSlot>(_users, StringComparer.Ordinal);
            foreach (string name in names)
            {
                if (name != "default" && users.Remove(name, out var slot))
                {
                    slot.Deleted = true;
                    removed.Add(slot);
                }
            }
            _users = users;
            return removed;
        }
    }

    /// <summary>
    /// ACL LOAD (and the start with aclfile): every "user" line of the file, all or nothing. The
    /// default user is reset first and changed only by the file's own line for it; users the file
    /// does not name are removed (their slots returned, for their clients to be closed).
    /// </summary>
    public (List<AclUserSlot>? Removed, string? Error) LoadFile(string path)
    {
        string[] lines;
        try
        {
            lines = File.ReadAllLines(path);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return (null, $"Error loading ACLs, opening file '{path}': {ex.Message}");
        }
        var loaded = new SortedDictionary<string, AclUser>(StringComparer.Ordinal) { ["default"] = AclUser.CreateDefault(_commands) };
        for (int i = 0; i < lines.Length; i++)
        {
            string[] words = lines[i].Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (words.Length == 0)
                continue;
            string? problem = null;
            if (words[0] != "user" || words.Length < 2)
                problem = "line should start with user keyword";
            else if (loaded.ContainsKey(words[1]) && words[1] != "default")
                problem = $"Duplicate user '{words[1]}' found";
            else
            {
                var (user, error) = AclUser.Create(words[1], _commands).WithRules(words[2..], wrap: false);
                if (user is null)
                    problem = error;
                else
                    loaded[words[1]] = user;
            }
            if (problem is not null)
                return (null, $"{path}:{i + 1}: {problem}. WARNING: ACL errors detected, no change to the previously active ACL rules was performed");
        }
        lock (_gate)
        {
            var removed = new List<AclUserSlot>();
            var users = new SortedDictionary<string, AclUserSlot>(StringComparer.Ordinal);
            foreach (var (name, user) in loaded)
            {
                if (_users.TryGetValue(name, out var slot))
                    slot.Replace(user);
                else
                    slot = new AclUserSlot(user);
                users[name] = slot;
            }
            foreach (var (name, slot) in _users)
            {
                if (users.ContainsKey(name))
                    continue;
                slot.Deleted = true;
                removed.Add(slot);
            }
            _users = users;
            return (removed, null);
        }
    }

    /// <summary>ACL SAVE: every user as ACL LIST writes it, the file replaced whole (owner-only: it holds password digests).</summary>
    public string? SaveFile(string path)
    {
        var text = new System.Text.StringBuilder();
        foreach (var slot in All)
            text.Append(slot.Current.Describe()).Append('\n');
        return Configuration.AtomicFile.Write(path, text.ToString(), UnixFileMode.UserRead | UnixFileMode.UserWrite);
    }

    /// <summary>The users as "user ..." lines, in ACL LIST's order (CONFIG REWRITE writes them).</summary>
    public List<string> Lines() => [.. All.Select(slot => slot.Current.Describe())];

    /// <summary>requirepass as Redis maps it: the default user's passwords become it (nopass when empty).</summary>
    public void ApplyRequirePass(string? password)
    {
        lock (_gate)
            Default.Replace(Default.Current.WithRequirePass(password));
    }
}
