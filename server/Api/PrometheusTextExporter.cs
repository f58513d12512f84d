using System.Globalization;
using System.Text;
using OpenTelemetry;
using OpenTelemetry.Metrics;

namespace Diagnostics.Server.Api;

/// <summary>
/// Writes what the OpenTelemetry SDK collected in Prometheus's text exposition format (0.0.4).
/// Written here because the registry this project builds from holds the OpenTelemetry SDK but
/// not its Prometheus exporter packages; the SDK still does the collection and aggregation, this
/// class only spells the result: dots become underscores, the unit becomes a suffix (By: _bytes,
/// s: _seconds), monotonic sums end in _total, histograms get cumulative _bucket lines with le,
/// _sum and _count.
/// </summary>
[ExportModes(ExportModes.Pull)]
public sealed class PrometheusTextExporter : BaseExporter<Metric>, IPullMetricExporter
{
    private readonly Lock _gate = new();
    private readonly StringBuilder _text = new(16 * 1024);

    public Func<int, bool>? Collect { get; set; }

    /// <summary>Collects every instrument now and returns the scrape text; one scrape at a time.</summary>
    public string Scrape(int timeoutMillis = 5000)
    {
        lock (_gate)
        {
            _text.Clear();
            if (Collect is not { } collect || !collect(timeoutMillis))
                throw new TimeoutException("metrics collection did not finish in time");
            return _text.ToString();
        }
    }

    public override ExportResult Export(in Batch<Metric> batch)
    {
        foreach (var metric in batch)
            Write(metric);
        return ExportResult.Success;
    }

    private void Write(Metric metric)
    {
        string name = MetricName(metric);
        bool histogram = metric.MetricType == MetricType.Histogram;
        bool counter = metric.MetricType is MetricType.LongSum or MetricType.DoubleSum;
        string type = histogram ? "histogram" : counter ? "counter" : "gauge";
        if (metric.Description is { Length: > 0 } description)
            _text.Append("# HELP ").Append(name).Append(' ').Append(description.Replace("\\", "\\\\").Replace("\n", "\\n")).Append('\n');
        _text.Append("# TYPE ").Append(name).Append(' ').Append(type).Append('\n');
        foreach (ref readonly var point in metric.GetMetricPoints())
        {
            if (histogram)
            {
                long cumulative = 0;
                foreach (var bucket in point.GetHistogramBuckets())
                {
                    cumulative += bucket.BucketCount;
                    string bound = double.IsPositiveInfinity(bucket.ExplicitBound) ? "+Inf" : Number(bucket.ExplicitBound);
                    Sample(name + "_bucket", point, ("le", bound), cumulative.ToString(CultureInfo.InvariantCulture));
                }
                Sample(name + "_sum", point, null, Number(point.GetHistogramSum()));
                Sample(name + "_count", point, null, point.GetHistogramCount().ToString(CultureInfo.InvariantCulture));
                continue;
            }
            string value = metric.MetricType switch
            {
                MetricType.LongSum or MetricType.LongSumNonMonotonic => point.GetSumLong().ToString(CultureInfo.InvariantCulture),
                MetricType.DoubleSum or MetricType.DoubleSumNonMonotonic => Number(point.GetSumDouble()),
                MetricType.LongGauge => point.GetGaugeLastValueLong().ToString(CultureInfo.InvariantCulture),
                _ => Number(point.GetGaugeLastValueDouble()),
            };
            Sample(name, point, null, value);
        }
    }

    private void Sample(string name, in MetricPoint point, (string Key, string Value)? extra, string value)
    {
        _text.Append(name);
        bool first = true;
        foreach (var tag in point.Tags)
        {
            _text.Append(first ? '{' : ',').Append(LabelName(tag.Key)).Append("=\"");
            Escape(Convert.ToString(tag.Value, CultureInfo.InvariantCulture) ?? "");
            _text.Append('"');
            first = false;
        }
        if (extra is { } label)
        {
            _text.Append(first ? '{' : ',').Append(label.Key).Append("=\"").Append(label.Value).Append('"');
            first = false;
        }
        if (!first)
            _text.Append('}');
        _text.Append(' ').Append(value).Append('\n');
    }

    private void Escape(string value)
    {
        foreach (char c in value)
        {
            switch (c)
            {
                case '\\': _text.Append("\\\\"); break;
                case '"': _text.Append("\\\""); break;
                case '\n': _text.Append("\\n"); break;
                default: _text.Append(c); break;
            }
        }
    }

    /// <summary>"redis.net.input" in By as a counter: "redis_net_input_bytes_total".</summary>
    public static string MetricName(Metric metric)
    {
        var name = new StringBuilder(LabelName(metric.Name));
        string? unit = metric.Unit switch
        {
            "By" => "bytes",
            "s" => "seconds",
            "ms" => "milliseconds",
            "%" => "percent",
            _ => null,
        };
        if (unit is not null && !name.ToString().EndsWith("_" + unit, StringComparison.Ordinal))
            name.Append('_').Append(unit);
        if (metric.MetricType is MetricType.LongSum or MetricType.DoubleSum)
            name.Append("_total");
        return name.ToString();
    }

    /// <summary>Any character Prometheus does not allow in a name becomes '_'.</summary>
    private static string LabelName(string name)
    {
        var result = new StringBuilder(name.Length);
        for (int i = 0; i < name.Length; i++)
        {
            char c = name[i];
            bool allowed = char.IsAsciiLetter(c) || c == '_' || (i > 0 && char.IsAsciiDigit(c));
            result.Append(allowed ? c : '_');
        }
        return result.ToString();
    }

    private static string Number(double value) =>
        double.IsNaN(value) ? "NaN" : double.IsPositiveInfinity(value) ? "+Inf" : double.IsNegativeInfinity(value) ? "-Inf" : value.ToString("R", CultureInfo.InvariantCulture);
}
