using System.Net;
using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>Anyone who can reach the port can read, change and delete everything.</summary>
public sealed class ExposedWithoutPasswordRule : IDoctorRule
{
    public string Id => "exposed-without-password";
    public string Area => "security";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        string bind = input.Config.TryGetValue("bind", out var b) ? b : "";
        bool password = input.Config.TryGetValue("requirepass", out var pass) && pass.Length > 0;
        bool protectedMode = !input.Config.TryGetValue("protected-mode", out var mode) || mode == "yes";
        if (password || protectedMode || !Exposed(bind))
            yield break;
        yield return new Finding
        {
            Rule = Id,
            Area = Area,
            Severity = FindingSeverity.Critical,
            Title = "The server is open to the network without a password",
            Seen = $"bind is '{bind}', protected-mode is off and no requirepass is set: any host that reaches port {input.InfoField("server", "tcp_port")} has full access.",
            Advice = "Set requirepass (or bind to 127.0.0.1), and keep protected-mode yes.",
            Evidence = new() { ["bind"] = bind, ["protected-mode"] = "no", ["requirepass"] = "" },
        };
    }

    private static bool Exposed(string bind)
    {
        foreach (string address in bind.Split(' ', StringSplitOptions.RemoveEmptyEntries))
        {
            string name = address.TrimStart('-');
            if (!name.Equals("localhost", StringComparison.OrdinalIgnoreCase) && !(IPAddress.TryParse(name, out var ip) && IPAddress.IsLoopback(ip)))
                return true;
        }
        return false;
    }
}
