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

    /// <summary>requirepass as Redis maps it: the default user's passwords become it (nopass when empty).</summary>
    public void ApplyRequirePass(string? password)
    {
        lock (_gate)
            Default.Replace(Default.Current.WithRequirePass(password));
    }
}
