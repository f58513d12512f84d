using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http.Features;

namespace Diagnostics.Server.Api.Lane;

/// <summary>
/// One HTTP connection on the <see cref="DiagnosticsLane"/>: the socket pumped into and out of two
/// pipes whose application side (Kestrel's HTTP parser, the middleware, the handlers) continues on
/// the lane's threads. The pumps themselves run where the socket completes (the socket engine's
/// threads, with inline completions): they only move bytes.
/// </summary>
internal sealed class LaneConnection : ConnectionContext,
    IConnectionIdFeature, IConnectionTransportFeature, IConnectionItemsFeature, IConnectionLifetimeFeature,
    IConnectionEndPointFeature, IConnectionSocketFeature
{
    // Kestrel's own transport defaults: 1 MB of request read ahead, 64 KB of response queued.
    private const long InputPauseBytes = 1024 * 1024;
    private const long OutputPauseBytes = 64 * 1024;
    private const int MinimumReceiveBytes = 4096;
    private static long s_lastId;

    private readonly Socket _socket;
    private readonly DiagnosticsLane _lane;
    private readonly Pipe _input;
    private readonly Pipe _output;
    private readonly FeatureCollection _features = new();
    private readonly CancellationTokenSource _closed = new();
    private readonly Task _receiving;
    private readonly Task _sending;
    private volatile ConnectionAbortedException? _abortReason;

    public LaneConnection(Socket socket, DiagnosticsLane lane)
    {
        _socket = socket;
        _lane = lane;
        socket.NoDelay = true;
        ConnectionId = "lane-" + Interlocked.Increment(ref s_lastId).ToString(System.Globalization.CultureInfo.InvariantCulture);
        LocalEndPoint = socket.LocalEndPoint;
        RemoteEndPoint = socket.RemoteEndPoint;
        ConnectionClosed = _closed.Token;
        _input = new Pipe(new PipeOptions(
            readerScheduler: lane, writerScheduler: PipeScheduler.Inline,
            pauseWriterThreshold: InputPauseBytes, resumeWriterThreshold: InputPauseBytes / 2, useSynchronizationContext: false));
        _output = new Pipe(new PipeOptions(
            readerScheduler: PipeScheduler.Inline, writerScheduler: lane,
            pauseWriterThreshold: OutputPauseBytes, resumeWriterThreshold: OutputPauseBytes / 2, useSynchronizationContext: false));
        Transport = new DuplexPipe(_input.Reader, _output.Writer);
        _features.Set<IConnectionIdFeature>(this);
        _features.Set<IConnectionTransportFeature>(this);
        _features.Set<IConnectionItemsFeature>(this);
        _features.Set<IConnectionLifetimeFeature>(this);
        _features.Set<IConnectionEndPointFeature>(this);
        _features.Set<IConnectionSocketFeature>(this);
        _receiving = ReceiveAsync();
        _sending = SendAsync();
    }

    public override string ConnectionId { get; set; }
    public override IFeatureCollection Features => _features;
    public override IDictionary<object, object?> Items { get; set; } = new Dictionary<object, object?>();
    public override IDuplexPipe Transport { get; set; }
    public Socket Socket => _socket;

    public override void Abort(ConnectionAbortedException abortReason)
    {
        _abortReason ??= abortReason;
        // Ends both pumps: the receive fails, the send pump's pending read returns cancelled.
        ShutDownSocket();
        _output.Reader.CancelPendingRead();
    }

    public override async ValueTask DisposeAsync()
    {
        Transport.Input.Complete();
        Transport.Output.Complete();
        await Task.WhenAll(_receiving, _sending).ConfigureAwait(false);
        _socket.Dispose();
        // _closed is not disposed: it has no timer to free, and its cancellation, scheduled on the
        // lane when the receive ended, may run after this.
    }

    private async Task ReceiveAsync()
    {
        Exception? error = null;
        var writer = _input.Writer;
        try
        {
            while (true)
            {
                var buffer = writer.GetMemory(MinimumReceiveBytes);
                int read = await _socket.ReceiveAsync(buffer, SocketFlags.None).ConfigureAwait(false);
                if (read == 0)
                    break;
                writer.Advance(read);
                var flush = await writer.FlushAsync().ConfigureAwait(false);
                if (flush.IsCompleted || flush.IsCanceled)
                    break;
            }
        }
        catch (Exception ex)
        {
            error = Failure(ex);
        }
        finally
        {
            await writer.CompleteAsync(error).ConfigureAwait(false);
            // Tokens' callbacks are the application's: they run on the lane, not on a socket thread.
            _lane.Schedule(static state => ((CancellationTokenSource)state!).Cancel(), _closed);
        }
    }

    private async Task SendAsync()
    {
        Exception? error = null;
        var reader = _output.Reader;
        try
        {
            while (true)
            {
                var result = await reader.ReadAsync().ConfigureAwait(false);
                if (result.IsCanceled)
                    break;
                var buffer = result.Buffer;
                foreach (var segment in buffer)
                    await _socket.SendAsync(segment, SocketFlags.None).ConfigureAwait(false);
                reader.AdvanceTo(buffer.End);
                if (result.IsCompleted)
                    break;
            }
        }
        catch (Exception ex)
        {
            error = Failure(ex);
        }
        finally
        {
            await reader.CompleteAsync(error).ConfigureAwait(false);
            // The response is all sent: tell the peer, which ends its side and so our receive.
            ShutDownSocket();
        }
    }

    /// <summary>A socket failure as the application sees it: the abort's reason, or a reset.</summary>
    private Exception Failure(Exception ex)
        => ex is SocketException or ObjectDisposedException ? _abortReason ?? (Exception)new ConnectionResetException(ex.Message, ex) : ex;

    private void ShutDownSocket()
    {
        try
        {
            _socket.Shutdown(SocketShutdown.Both);
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            // Already closed by the peer or by an abort: nothing left to end.
        }
    }

    private sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
    {
        public PipeReader Input { get; } = input;
        public PipeWriter Output { get; } = output;
    }
}
