using System.Text;
using Diagnostics.Server.Commands;
using Diagnostics.Studio.Security;

namespace Diagnostics.Server.Acl;

/// <summary>
/// What an ACL user's rules grant of the studio's permissions: each exactly when some selector
/// allows the RESP command that shows or does the same (<see cref="StudioPermission.All"/>), so
/// HTTP logins and the RESP doctor commands read access from the one place it is decided.
/// </summary>
public sealed class AclStudioPermissions
{
    private readonly (StudioPermissions Permission, CommandSpec Spec)[] _grantingCommands;

    public AclStudioPermissions(CommandTable commands)
    {
        _grantingCommands = new (StudioPermissions, CommandSpec)[StudioPermission.All.Count];
        for (int i = 0; i < _grantingCommands.Length; i++)
        {
            var info = StudioPermission.All[i];
            string[] parts = info.Command.Split('|');
            var spec = commands.Find(parts[0]) ?? throw new InvalidOperationException($"no command '{parts[0]}' grants {info.Name}");
            if (parts.Length > 1)
                spec = spec.FindSubcommand(Encoding.ASCII.GetBytes(parts[1])) ?? throw new InvalidOperationException($"no subcommand '{info.Command}' grants {info.Name}");
            _grantingCommands[i] = (info.Permission, spec);
        }
    }

    /// <summary>The permissions whose commands some selector of <paramref name="user"/> allows.</summary>
    public StudioPermissions Of(AclUser user)
    {
        if (user.Unrestricted)
            return StudioPermissions.All;
        var granted = StudioPermissions.None;
        foreach (var (permission, spec) in _grantingCommands)
            foreach (var selector in user.Selectors)
                if (selector.AllowsCall(spec, default))
                {
                    granted |= permission;
                    break;
                }
        return granted;
    }
}
