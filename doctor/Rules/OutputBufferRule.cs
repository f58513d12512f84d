using Diagnostics.Contracts;

namespace Diagnostics.Doctor.Rules;

/// <summary>A client is not reading its replies: its output buffer holds server memory.</summary>
public sealed class OutputBufferRule : IDoctorRule
{
    private const long WarnBytes = 1024 * 1024;

    public string Id => "client-output-buffer";
    public string Area => "clients";

    public IEnumerable<Finding> Examine(DoctorInput input)
    {
        foreach (var client in input.Clients)
        {
            if (client.OutputMemoryBytes < WarnBytes)
                continue;
            yield return new Finding
            {
                Rule = Id,
                Area = Area,
                Severity = FindingSeverity.Warning,
                Title = $"Client {client.Id} is not reading its replies",
                Seen = $"Client id={client.Id} addr={client.Address} name='{client.Name}' holds {Human.Bytes(client.OutputMemoryBytes)} of unsent replies (last command {client.LastCommand}, idle {client.IdleSeconds} s).",
                Advice = "A slow or stuck consumer holds server memory until it reads. Fix the client, or bound it with client-output-buffer-limit so the server disconnects it.",
                Evidence = new()
                {
                    ["client_id"] = client.Id.ToString(System.Globalization.CultureInfo.InvariantCulture),
                    ["omem"] = client.OutputMemoryBytes.ToString(System.Globalization.CultureInfo.InvariantCulture),
                    ["client-output-buffer-limit"] = input.Config.TryGetValue("client-output-buffer-limit", out var limit) ? limit : "",
                },
                Chart = MetricNames.LargestOutputBufferBytes,
            };
        }
    }
}
