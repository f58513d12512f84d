using System.Globalization;
using System.Text;
using Diagnostics.Server.Configuration;
using Diagnostics.Server.Diagnostics.Latency;

namespace Diagnostics.Server.Diagnostics.Info;

/// <summary>
/// INFO latencystats, as Redis 7 writes it: for every command with recorded calls,
/// "latency_percentiles_usec_&lt;name&gt;:p50=1.003,p99=3.007,p99.9=4.015" with the percentiles of
/// latency-tracking-info-percentiles in microseconds (%.3f). Empty while latency-tracking is off.
/// </summary>
public static class LatencyStatsInfo
{
    public static void Write(StringBuilder text, DataServer server)
    {
        if (!server.Config.LatencyTracking)
            return;
        double[] percentiles = server.Config.LatencyTrackingInfoPercentiles;
        var specs = server.Commands.AllSpecs;
        foreach (int id in CommandLatency.CommandsWithData())
        {
            var distribution = CommandLatency.Snapshot(id);
            text.Append("latency_percentiles_usec_").Append(specs[id].FullName).Append(':');
            for (int i = 0; i < percentiles.Length; i++)
            {
                if (i > 0)
                    text.Append(',');
                double micros = distribution.Percentile(percentiles[i]) / 1000.0;
                text.Append('p').Append(LatencyPercentiles.Format(percentiles[i]))
                    .Append('=').Append(micros.ToString("F3", CultureInfo.InvariantCulture));
            }
            text.Append("\r\n");
        }
    }
}
