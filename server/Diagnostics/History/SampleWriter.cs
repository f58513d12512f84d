namespace Diagnostics.Server.Diagnostics.History;

/// <summary>
/// What a history source writes into one sample: gauges as they are, and rates as the change of
/// a cumulative counter since the previous sample divided by the time between them. The writer
/// remembers each counter's previous value, so a source just reports its running total. A
/// counter that went backwards (CONFIG RESETSTAT) counts as idle for that interval.
/// </summary>
public sealed class SampleWriter
{
    private readonly Dictionary<string, double> _previous = new(StringComparer.Ordinal);
    private double _elapsedSeconds;

    internal Dictionary<string, double> Figures { get; } = new(StringComparer.Ordinal);

    internal void Begin(double elapsedSeconds)
    {
        Figures.Clear();
        _elapsedSeconds = elapsedSeconds;
    }

    public void Gauge(string name, double value) => Figures[name] = value;

    public void Rate(string name, double cumulative)
    {
        if (_previous.TryGetValue(name, out double before) && _elapsedSeconds > 0)
            Figures[name] = Math.Max(0, cumulative - before) / _elapsedSeconds;
        else
            Figures[name] = 0;
        _previous[name] = cumulative;
    }

    /// <summary>The per-second change of a counter, without recording it as a figure (for derived figures).</summary>
    public double Delta(string key, double cumulative)
    {
        double delta = _previous.TryGetValue(key, out double before) ? Math.Max(0, cumulative - before) : 0;
        _previous[key] = cumulative;
        return delta;
    }

    public double ElapsedSeconds => _elapsedSeconds;
}
