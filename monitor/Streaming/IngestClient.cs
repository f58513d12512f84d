using System.Net.Http.Headers;
using System.Text.Json;
using System.Threading.Channels;
using Diagnostics.Contracts;

namespace Diagnostics.Monitor.Streaming;

/// <summary>
/// Pushes batches to the server's ingest endpoint in order, from a bounded queue: when the server
/// is slow or away, the oldest batches go first and every one that goes is counted (the next
/// batch that gets through reports the count). Never listens; one keep-alive connection.
/// </summary>
public sealed class IngestClient : IDisposable
{
    public const int QueuedBatches = 30;
    private readonly HttpClient _http = new() { Timeout = TimeSpan.FromSeconds(5) };
    private readonly Channel<MonitorBatch> _queue;
    private readonly Task _sender;
    private readonly CancellationTokenSource _stop = new();
    private readonly Uri _url;
    private long _dropped;

    public IngestClient(MonitorAnnouncement server)
    {
        _url = new Uri(server.IngestUrl);
        _http.DefaultRequestHeaders.Add(MonitorAnnouncement.TokenHeader, server.Token);
        _queue = Channel.CreateBounded<MonitorBatch>(new BoundedChannelOptions(QueuedBatches) { FullMode = BoundedChannelFullMode.DropOldest, SingleReader = true },
            _ => Interlocked.Increment(ref _dropped));
        _sender = Task.Run(SendAsync);
    }

    public long DroppedBatches => Interlocked.Read(ref _dropped);
    public long Sent { get; private set; }
    public string? LastError { get; private set; }

    public void Enqueue(MonitorBatch batch) => _queue.Writer.TryWrite(batch);

    private async Task SendAsync()
    {
        try
        {
            while (await _queue.Reader.WaitToReadAsync(_stop.Token))
            {
                while (_queue.Reader.TryPeek(out var batch))
                {
                    if (!await TrySendAsync(batch))
                    {
                        await Task.Delay(500, _stop.Token);
                        continue;
                    }
                    _queue.Reader.TryRead(out _);
                }
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    private async Task<bool> TrySendAsync(MonitorBatch batch)
    {
        try
        {
            var body = JsonSerializer.SerializeToUtf8Bytes(batch, ContractsJson.Default.MonitorBatch);
            using var content = new ByteArrayContent(body);
            content.Headers.ContentType = new MediaTypeHeaderValue("application/json");
            using var response = await _http.PostAsync(_url, content, _stop.Token);
            if (!response.IsSuccessStatusCode)
            {
                LastError = $"{(int)response.StatusCode} {await response.Content.ReadAsStringAsync(_stop.Token)}".Trim();
                // A refusal is final for this batch: sending it again would be refused again.
                Interlocked.Increment(ref _dropped);
                return true;
            }
            LastError = null;
            Sent++;
            return true;
        }
        catch (HttpRequestException ex)
        {
            LastError = ex.Message;
            return false;
        }
        catch (TaskCanceledException) when (!_stop.IsCancellationRequested)
        {
            LastError = "the server did not answer within 5 s";
            return false;
        }
    }

    /// <summary>Sends what is queued (up to <paramref name="wait"/>), then stops.</summary>
    public void Dispose() => Dispose(TimeSpan.FromSeconds(2));

    public void Dispose(TimeSpan wait)
    {
        _queue.Writer.TryComplete();
        _sender.Wait(wait);
        _stop.Cancel();
        _http.Dispose();
    }
}
