using System.Diagnostics;

namespace Diagnostics.Benchmarks;

/// <summary>What the scraper got from one endpoint over all the runs it watched.</summary>
public sealed class ScrapeTally(string path)
{
    public string Path { get; } = path;
    public int Succeeded { get; set; }
    public int Failed { get; set; }
    /// <summary>Body size of each successful response.</summary>
    public List<double> Bytes { get; } = [];
    /// <summary>Request to last body byte, per successful response.</summary>
    public List<double> Milliseconds { get; } = [];
    public string? LastProblem { get; set; }
}

/// <summary>
/// Watches our server as a monitoring system would while a load runs: once a second, from the
/// moment it starts, it GETs the Prometheus endpoint and a one-minute window of the history (what
/// a live chart refreshed every second asks for), reading every response to its end over
/// keep-alive connections. Tallies accumulate across Start/Stop pairs; read them after Stop.
/// </summary>
public sealed class MonitoringScraper : IDisposable
{
    public const string MetricsPath = "/metrics";
    public const string HistoryPath = "/api/history?seconds=60";
    public const int IntervalMillis = 1000;

    private readonly HttpClient _http;
    private readonly ScrapeTally[] _tallies = [new(MetricsPath), new(HistoryPath)];
    private readonly byte[] _buffer = new byte[64 * 1024];
    private ManualResetEventSlim? _stop;
    private Thread? _thread;

    public MonitoringScraper(int httpPort)
    {
        _http = new HttpClient
        {
            BaseAddress = new Uri($"http://127.0.0.1:{httpPort}"),
            Timeout = TimeSpan.FromSeconds(10),
        };
    }

    public IReadOnlyList<ScrapeTally> Tallies => _tallies;

    public void Start()
    {
        if (_thread is not null)
            throw new InvalidOperationException("the scraper is already running");
        _stop = new ManualResetEventSlim();
        _thread = new Thread(Scrape) { IsBackground = true, Name = "scraper" };
        _thread.Start(_stop);
    }

    /// <summary>Stops after the scrape in progress, if any, has finished.</summary>
    public void Stop()
    {
        if (_thread is null)
            return;
        _stop!.Set();
        _thread.Join();
        _thread = null;
        _stop.Dispose();
        _stop = null;
    }

    private void Scrape(object? state)
    {
        var stop = (ManualResetEventSlim)state!;
        long started = Stopwatch.GetTimestamp();
        for (long tick = 1; ; tick++)
        {
            foreach (var tally in _tallies)
                Fetch(tally);
            // On a fixed one-second grid from the start, so slow responses do not stretch the interval.
            long wait = tick * IntervalMillis - (long)Stopwatch.GetElapsedTime(started).TotalMilliseconds;
            if (stop.Wait((int)Math.Max(0, wait)))
                return;
        }
    }

    private void Fetch(ScrapeTally tally)
    {
        long started = Stopwatch.GetTimestamp();
        try
        {
            using var response = _http.Send(new HttpRequestMessage(HttpMethod.Get, tally.Path), HttpCompletionOption.ResponseHeadersRead);
            using var body = response.Content.ReadAsStream();
            long bytes = 0;
            int read;
            while ((read = body.Read(_buffer)) > 0)
                bytes += read;
            if (!response.IsSuccessStatusCode)
            {
                tally.Failed++;
                tally.LastProblem = $"HTTP {(int)response.StatusCode} {response.ReasonPhrase}";
                return;
            }
            tally.Succeeded++;
            tally.Bytes.Add(bytes);
            tally.Milliseconds.Add(Stopwatch.GetElapsedTime(started).TotalMilliseconds);
        }
        catch (Exception e) when (e is HttpRequestException or IOException or TaskCanceledException)
        {
            tally.Failed++;
            tally.LastProblem = e.Message;
        }
    }

    public void Dispose()
    {
        Stop();
        _http.Dispose();
    }
}
