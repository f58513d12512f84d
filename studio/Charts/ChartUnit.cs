namespace Diagnostics.Studio.Charts;

/// <summary>How a chart's values read to people; charts.js formats each (KB/MB, ops/s, µs/ms...).</summary>
public enum ChartUnit
{
    Count,
    Bytes,
    BytesPerSecond,
    OpsPerSecond,
    Micros,
    Percent,
    MillisPerSecond,
    Seconds,
}
