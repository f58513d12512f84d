using System.Globalization;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>
/// Calls keep being refused by ACL rules (NOPERM): an application runs commands, keys or channels
/// its user does not allow, typically right after an ACL change or a deployment that uses new
/// commands. Each refusal is an error its caller sees, so the finding names who is refused what,
/// from ACL LOG (live, and from a package's acl-log.json).
/// </summary>
public sealed class AclDenialsRule : IDoctorRule
{
    private const int WindowSeconds = 60;
    private const double SpikeDenials = 10;
    private const int EntriesShown = 3;

    public string Id => "acl-denials";
    public string Area => "security";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        double denied = input.RecentCount(MetricNames.AclDeniedPerSecond, WindowSeconds);
        if (denied < SpikeDenials)
            yield break;
        // ACL LOG's entries refused again within the window, as problems: a command refused to a
        // user is one; the keys (or channels) refused to a user are one however many they are.
        long since = input.TakenUnixMs - WindowSeconds * 1000L;
        var groups = input.AclLog
            .Where(e => e.Reason != "auth" && e.UpdatedUnixMs >= since)
            .GroupBy(e => (e.Username, e.Reason, Object: e.Reason == "command" ? e.Object : ""))
            .Select(g => new Refusal(g.Key.Username, g.Key.Reason, [.. g.OrderByDescending(e => e.UpdatedUnixMs)]))
            .OrderByDescending(r => r.Count)
            .Take(EntriesShown)
            .ToList();
        var evidence = new Dictionary<string, string>
        {
            ["denied_last_minute"] = denied.ToString("0", CultureInfo.InvariantCulture),
            ["acl_access_denied_cmd"] = input.InfoInt64("stats", "acl_access_denied_cmd").ToString(CultureInfo.InvariantCulture),
            ["acl_access_denied_key"] = input.InfoInt64("stats", "acl_access_denied_key").ToString(CultureInfo.InvariantCulture),
            ["acl_access_denied_channel"] = input.InfoInt64("stats", "acl_access_denied_channel").ToString(CultureInfo.InvariantCulture),
        };
        for (int i = 0; i < groups.Count; i++)
            evidence[$"entry_{i}"] = groups[i].Evidence;
        var top = groups.FirstOrDefault();
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = FindingSeverity.Warning,
            Title = "Calls refused by ACL rules",
            Seen = $"{Human.Count(denied)} calls were refused by ACL rules (NOPERM) in the last {WindowSeconds} s."
                + (groups.Count > 0 ? $" Most refused, from ACL LOG: {string.Join("; ", groups.Select(g => g.Describe()))}." : " ACL LOG holds none of them (acllog-max-len 0, or it was reset)."),
            Advice = "A client is running what its ACL user does not allow, and gets a NOPERM error for each call: "
                + (top is null ? "" : $"{top.Grant()}, or fix the client. ")
                + "ACL DRYRUN <user> <command> [args] says which rule refuses a call; ACL LOG shows each refusal with the client it came from.",
            Evidence = evidence,
            Chart = MetricNames.AclDeniedPerSecond,
        };
    }

    /// <summary>One user refused one command, or keys, or channels: ACL LOG's entries for it, newest first.</summary>
    private sealed record Refusal(string User, string Reason, List<AclLogRecord> Entries)
    {
        public long Count => Entries.Sum(e => e.Count);

        private AclLogRecord Newest => Entries[0];

        public string Evidence => Reason == "command"
            ? $"user={User},reason=command,object={Newest.Object},context={Newest.Context},count={Count}"
            : $"user={User},reason={Reason},objects={Entries.Count},example={Newest.Object},context={Newest.Context},count={Count}";

        public string Describe()
        {
            string what = Reason == "command"
                ? $"'{Newest.Object}' {Human.Count(Count)}x"
                : $"{Human.Count(Count)} calls on {Human.Count(Entries.Count)} {Reason}{(Entries.Count == 1 ? "" : "s")} such as {string.Join(", ", Entries.Take(2).Select(e => $"'{e.Object}'"))}";
            string client = ClientAddress(Newest.ClientInfo) is { } address ? $", last from {address}" : "";
            return $"user '{User}' refused {what} ({Newest.Context}{client})";
        }

        /// <summary>The rule that would allow it, as the operator would type it.</summary>
        public string Grant() => Reason switch
        {
            "key" => $"if '{User}' should reach those keys, give it their pattern (ACL SETUSER {User} ~<pattern>)",
            "channel" => $"if '{User}' should reach those channels, give it their pattern (ACL SETUSER {User} &<pattern>)",
            _ => $"if '{User}' should run it, allow it (ACL SETUSER {User} +{Newest.Object})",
        };
    }

    /// <summary>"addr=10.0.0.5:41000" out of CLIENT LIST-style client info; null when it has none.</summary>
    private static string? ClientAddress(string clientInfo)
    {
        foreach (string part in clientInfo.Split(' '))
            if (part.StartsWith("addr=", StringComparison.Ordinal))
                return part["addr=".Length..];
        return null;
    }
}
