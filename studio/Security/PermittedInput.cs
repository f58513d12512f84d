using Diagnostics.Contracts;
using Diagnostics.Doctor;

namespace Diagnostics.Studio.Security;

/// <summary>
/// The doctor's input as a login may see it: the parts its permissions do not open are emptied
/// before the rules run, so a finding never tells a login what the page or route for that part
/// would refuse it (a hot key's name, a slow client's address). The settings stay: rules read
/// their thresholds there, and the values they quote are never secrets (redacted at the source).
/// </summary>
public static class PermittedInput
{
    public static DoctorInput Of(DoctorInput input, StudioPermissions permissions)
    {
        if ((permissions & StudioPermissions.All) == StudioPermissions.All)
            return input;
        var seen = input;
        if ((permissions & StudioPermissions.Clients) == 0)
            seen = seen with
            {
                Clients = [],
                ClosedClients = [],
                SlowSummary = seen.SlowSummary is { } summary ? summary with { Clients = [] } : null,
            };
        if ((permissions & StudioPermissions.SlowLog) == 0)
            seen = seen with { SlowLog = [] };
        if ((permissions & StudioPermissions.Keys) == 0)
            seen = seen with { HotKeys = null, Keyspace = null };
        if ((permissions & StudioPermissions.AclLog) == 0)
            seen = seen with { AclLog = [] };
        return seen;
    }
}
