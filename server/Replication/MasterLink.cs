using System.Diagnostics;
using System.Globalization;
using System.Net.Sockets;
using System.Text;
using Diagnostics.Server.Persistence;
using Microsoft.Extensions.Logging;

namespace Diagnostics.Server.Replication;

/// <summary>
/// This server's link to its master (Redis's replica side of replication.c), on a thread of its
/// own: connect, the handshake as redis-server 7.0 does it (PING, AUTH, REPLCONF listening-port /
/// ip-address / capa eof psync2, PSYNC), then a full sync (the RDB, <c>$len</c> or diskless
/// <c>$EOF:mark</c>, loaded with every shard held) or a partial one (+CONTINUE), then the command
/// stream (<see cref="StreamApplier"/>) with REPLCONF ACK every second. Any failure drops the
/// connection and tries again a second later, as Redis's replication cron does; the data and the
/// offset stay (the cached master), so the next PSYNC can continue where this one stopped.
/// One link per REPLICAOF target: REPLICAOF to another master or NO ONE stops it for good.
/// </summary>
public sealed class MasterLink : IDisposable
{
    private const int RetryMs = 1000;
    private const int AckPeriodMs = 1000;

    private readonly DataServer _server;
    private readonly ReplicationRole _role;
    private readonly ILogger _log;
    private readonly Thread _thread;
    private readonly ManualResetEventSlim _wake = new(false);
    private readonly StreamApplier _applier;
    private volatile bool _stopped;
    private volatile MasterConnection? _connection;
    private volatile MasterLinkState _state = MasterLinkState.Connect;
    private long _downSinceUnixMs;
    private long _transferSize;
    private long _transferRead;

    internal MasterLink(DataServer server, ReplicationRole role, string host, int port, ILogger log)
    {
        _server = server;
        _role = role;
        _log = log;
        Host = host;
        Port = port;
        Client = new MasterClient(server, host, port, log);
        _applier = new StreamApplier(server, role, this, Client);
        _thread = new Thread(Run) { IsBackground = true, Name = "master link" };
    }

    public string Host { get; }
    public int Port { get; }
    /// <summary>The client the master's stream runs for (CLIENT LIST flags=M).</summary>
    public MasterClient Client { get; }
    public MasterLinkState State => _state;

    /// <summary>When the link last went down (Unix ms), 0 while it never was up.</summary>
    public long DownSinceUnixMs => Interlocked.Read(ref _downSinceUnixMs);

    /// <summary>During a full sync: the RDB's announced size (-1: diskless, unknown) and the bytes read of it.</summary>
    public long TransferSize => Interlocked.Read(ref _transferSize);
    public long TransferRead => _transfer is { } transfer ? transfer.Transferred : Interlocked.Read(ref _transferRead);
    // The RDB being read, so INFO shows the progress while it loads.
    private volatile RdbTransferStream? _transfer;

    /// <summary>Bytes of the stream read, applied or not (Redis's read_reploff).</summary>
    public long ReadOffset
    {
        get
        {
            var connection = _connection;
            long buffered = connection is null || _state != MasterLinkState.Connected ? 0 : Math.Max(0, connection.Available);
            return _role.Ids.MasterReplOffset + buffered;
        }
    }

    /// <summary>Commands applied from the stream since the link was made.</summary>
    public long CommandsApplied => _applier.CommandsApplied;

    /// <summary>Still the server's link (checked with every shard held before anything is applied).</summary>
    internal bool IsCurrent => !_stopped && ReferenceEquals(_role.Link, this);

    internal void Start() => _thread.Start();

    /// <summary>For good (REPLICAOF elsewhere or NO ONE, shutdown): the thread ends after what it is doing.</summary>
    internal void Stop()
    {
        _stopped = true;
        _connection?.Abort();
        _wake.Set();
    }

    /// <summary>CLIENT KILL of the master client: the connection drops, the link reconnects and continues.</summary>
    public void DropConnection() => _connection?.Abort();

    private void Run()
    {
        Memory.TrackedAllocator.NameCurrentThread("master link");
        while (!_stopped)
        {
            _state = MasterLinkState.Connect;
            _log.LogInformation("Connecting to MASTER {Host}:{Port}", Host, Port);
            try
            {
                RunConnection();
            }
            catch (Exception ex) when (ex is SocketException or IOException or TimeoutException or InvalidDataException or ObjectDisposedException or RdbFormatException or AofFormatException or ReplicationException)
            {
                if (!_stopped)
                    LogFailure(ex);
            }
            finally
            {
                var connection = _connection;
                _connection = null;
                connection?.Dispose();
                if (_state == MasterLinkState.Connected)
                {
                    Interlocked.Exchange(ref _downSinceUnixMs, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds());
                    // Redis's replicationCacheMaster: the data and offset stay for the next PSYNC.
                    if (!_stopped)
                        _log.LogInformation("Caching the disconnected master state.");
                }
                _applier.Reset();
                _state = MasterLinkState.Connect;
            }
            if (_stopped)
                break;
            _wake.Wait(RetryMs);
        }
        // The thread owns what it applied with: freed here, never while a batch may still run.
        _applier.Dispose();
        Client.Dispose();
    }

    private void LogFailure(Exception ex)
    {
        switch (_state)
        {
            case MasterLinkState.Connected:
                _log.LogWarning("Connection with master lost ({Reason}).", ex.Message);
                break;
            case MasterLinkState.Transfer:
                _log.LogWarning("I/O error trying to sync with MASTER: {Reason}", ex.Message);
                break;
            default:
                _log.LogWarning("Error condition on socket for SYNC: {Reason}", ex.Message);
                break;
        }
    }

    private int TimeoutMs => (int)Math.Min(int.MaxValue, _server.Config.ReplTimeoutSeconds * 1000L);

    private void RunConnection()
    {
        _state = MasterLinkState.Connecting;
        var connection = MasterConnection.Connect(Host, Port, TimeoutMs, Client,
            _server.Config.Tls.Replication ? _server.Tls.ClientOptions(Host) : null);
        _connection = connection;
        if (_stopped)
            return;
        _state = MasterLinkState.Handshake;
        _log.LogInformation("MASTER <-> REPLICA sync started");
        long psyncStarted = Stopwatch.GetTimestamp();
        Handshake(connection);
        var (full, replId, offset) = Psync(connection);
        long bytesBefore = connection.BytesRead;
        if (full)
        {
            FullSync(connection, replId, offset, psyncStarted, bytesBefore);
        }
        else
        {
            _role.Syncs.Add(new SyncRecord(false, Host, Port, _role.Ids.ReplId, _role.Ids.MasterReplOffset, 0, 0, connection.BytesRead,
                Stopwatch.GetElapsedTime(psyncStarted).TotalMilliseconds, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds()));
        }
        Stream(connection);
    }

    /// <summary>PING, then AUTH and the REPLCONFs sent at once and their replies read in order, as Redis 7.0's syncWithMaster.</summary>
    private void Handshake(MasterConnection connection)
    {
        connection.SendCommand("PING");
        string pong = connection.ReadLine(TimeoutMs);
        // A master that wants a password says so to PING: that is fine, AUTH follows.
        if (pong.StartsWith('-') && !pong.StartsWith("-NOAUTH", StringComparison.Ordinal) && !pong.StartsWith("-NOPERM", StringComparison.Ordinal)
            && !pong.StartsWith("-ERR operation not permitted", StringComparison.Ordinal))
            throw new ReplicationException($"Error reply to PING from master: '{pong}'");
        _log.LogInformation("Master replied to PING, replication can continue...");

        var config = _server.Config;
        bool auth = config.MasterAuth is not null;
        if (auth)
        {
            // The password goes to the socket only: never into a log line or an exception.
            if (config.MasterUser is { } user)
                connection.SendCommand("AUTH", user, config.MasterAuth!);
            else
                connection.SendCommand("AUTH", config.MasterAuth!);
        }
        // As Redis: with tls-replication the master is told the TLS port (where its other replicas, and Sentinel, should connect).
        int port = config.ReplicaAnnouncePort != 0 ? config.ReplicaAnnouncePort
            : config.Tls.Replication && config.Tls.Port != 0 ? config.Tls.Port : config.Port;
        connection.SendCommand("REPLCONF", "listening-port", port.ToString(CultureInfo.InvariantCulture));
        string? announceIp = config.ReplicaAnnounceIp;
        if (announceIp is not null)
            connection.SendCommand("REPLCONF", "ip-address", announceIp);
        connection.SendCommand("REPLCONF", "capa", "eof", "capa", "psync2");

        if (auth)
        {
            string reply = connection.ReadLine(TimeoutMs);
            if (reply.StartsWith('-'))
                throw new ReplicationException($"Unable to AUTH to MASTER: {reply}");
        }
        string listening = connection.ReadLine(TimeoutMs);
        if (listening.StartsWith('-'))
            _log.LogInformation("(Non critical) Master does not understand REPLCONF listening-port: {Reply}", listening);
        if (announceIp is not null)
        {
            string ip = connection.ReadLine(TimeoutMs);
            if (ip.StartsWith('-'))
                _log.LogInformation("(Non critical) Master does not understand REPLCONF ip-address: {Reply}", ip);
        }
        string capa = connection.ReadLine(TimeoutMs);
        if (capa.StartsWith('-'))
            _log.LogInformation("(Non critical) Master does not understand REPLCONF capa: {Reply}", capa);
    }

    /// <summary>PSYNC from the cached master's position, or "? -1"; returns whether a full sync follows.</summary>
    private (bool Full, string ReplId, long Offset) Psync(MasterConnection connection)
    {
        var ids = _role.Ids.Read();
        if (_role.HasCachedMaster)
        {
            string from = (ids.MasterReplOffset + 1).ToString(CultureInfo.InvariantCulture);
            _log.LogInformation("Trying a partial resynchronization (request {ReplId}:{Offset}).", ids.ReplId, from);
            connection.SendCommand("PSYNC", ids.ReplId, from);
        }
        else
        {
            _log.LogInformation("Partial resynchronization not possible (no cached master)");
            connection.SendCommand("PSYNC", "?", "-1");
        }
        string reply = connection.ReadLine(TimeoutMs);
        if (reply.StartsWith("+FULLRESYNC", StringComparison.Ordinal))
        {
            string[] words = reply.Split(' ');
            if (words.Length != 3 || words[1].Length != 40 || !long.TryParse(words[2], NumberStyles.None, CultureInfo.InvariantCulture, out long offset))
                throw new ReplicationException($"Master replied with wrong +FULLRESYNC syntax: {reply}");
            _log.LogInformation("Full resync from master: {ReplId}:{Offset}", words[1], offset);
            if (_role.HasCachedMaster)
                _log.LogInformation("Discarding previously cached master state.");
            // From here the data is being replaced: a failure leaves nothing to continue from.
            _role.HasCachedMaster = false;
            return (true, words[1], offset);
        }
        if (reply.StartsWith("+CONTINUE", StringComparison.Ordinal))
        {
            _log.LogInformation("Successful partial resynchronization with master.");
            string newId = reply.Length > "+CONTINUE ".Length ? reply["+CONTINUE ".Length..].Trim() : "";
            if (newId.Length == 40 && newId != ids.ReplId)
            {
                _log.LogWarning("Master replication ID changed to {ReplId}", newId);
                _role.Ids.ContinueAs(newId);
                // As Redis: our replicas reconnect and learn the new ID from us.
                _server.ReplicationMaster.DisconnectReplicas("the master's replication ID changed");
            }
            _log.LogInformation("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
            return (false, newId, ids.MasterReplOffset);
        }
        if (reply.StartsWith("-NOMASTERLINK", StringComparison.Ordinal) || reply.StartsWith("-LOADING", StringComparison.Ordinal))
            throw new ReplicationException($"Master is currently unable to PSYNC but should be in the future: {reply}");
        throw new ReplicationException($"Unexpected reply to PSYNC from master: {reply}");
    }

    /// <summary>Reads the RDB's header line, then empties the keyspace and loads the RDB from the socket with every shard held.</summary>
    private void FullSync(MasterConnection connection, string replId, long offset, long started, long bytesBefore)
    {
        _state = MasterLinkState.Transfer;
        string header = connection.ReadLine(TimeoutMs);
        if (header.StartsWith('-'))
            throw new ReplicationException($"MASTER aborted replication with an error: {header}");
        if (!header.StartsWith('$'))
            throw new ReplicationException($"Bad protocol from MASTER, the first byte is not '$' (we received '{header}'), are you sure the host and port are right?");
        byte[]? eofMark = null;
        long length = -1;
        if (header.StartsWith("$EOF:", StringComparison.Ordinal) && header.Length == 5 + 40)
        {
            eofMark = Encoding.ASCII.GetBytes(header[5..]);
            _log.LogInformation("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to parser");
        }
        else if (long.TryParse(header.AsSpan(1), NumberStyles.None, CultureInfo.InvariantCulture, out length))
        {
            _log.LogInformation("MASTER <-> REPLICA sync: receiving {Bytes} bytes from master to parser", length);
        }
        else
        {
            throw new ReplicationException($"Bad protocol from MASTER, the RDB length is not a number (we received '{header}')");
        }
        Interlocked.Exchange(ref _transferSize, length);
        Interlocked.Exchange(ref _transferRead, 0);

        // Our own replicas' history ends with the data it replaces: they are disconnected before the
        // load (Redis's replicationAttachToNewMaster), are refused (NOMASTERLINK) while it runs, then resync.
        _server.ReplicationMaster.DisconnectReplicas("a full sync with our master replaces the data");
        var stream = new RdbTransferStream(connection, length, TimeoutMs);
        _transfer = stream;
        var loaded = new FullSyncLoader(_server, this, stream, eofMark, _log);
        var hold = new KeyspaceHold(_server.Keyspace);
        try
        {
            hold.Run(loaded.LoadHoldingAll);
        }
        finally
        {
            _transfer = null;
        }
        if (!loaded.Done)
            return; // stopped or replaced meanwhile
        _role.Ids.AdoptMaster(replId, offset);
        _role.HasCachedMaster = true;
        Client.DatabaseIndex = 0;
        Client.ResetTransaction();
        Interlocked.Exchange(ref _transferRead, stream.Transferred);
        _log.LogInformation("MASTER <-> REPLICA sync: Finished with success");
        var record = new SyncRecord(true, Host, Port, replId, offset, stream.Transferred, loaded.Keys, connection.BytesRead - bytesBefore,
            Stopwatch.GetElapsedTime(started).TotalMilliseconds, DateTimeOffset.UtcNow.ToUnixTimeMilliseconds());
        _role.Syncs.Add(record);
        _role.RaiseSyncCompleted(record);
        // The loaded data never went through the AOF: a rewrite makes the file hold it (Redis
        // restarts its AOF after a sync for the same reason).
        if (_server.Aof.Enabled && _server.Aof.StartRewrite() is { } problem)
            _log.LogWarning("The AOF could not be rewritten after the sync with the master: {Problem}", problem);
    }

    /// <summary>The command stream until the connection ends: apply, ACK every second, drop a master silent for repl-timeout.</summary>
    private void Stream(MasterConnection connection)
    {
        _state = MasterLinkState.Connected;
        _applier.Begin(connection);
        // The first ACK at once, as Redis sends after a sync: the master sees us online.
        long nextAck = 0;
        long lastIo = Environment.TickCount64;
        while (!_stopped)
        {
            if (!_applier.ApplyAvailable())
                return;
            long now = Environment.TickCount64;
            if (now >= nextAck)
            {
                _applier.SendAck(connection, _role.Ids.MasterReplOffset);
                nextAck = now + AckPeriodMs;
            }
            if (connection.Fill((int)Math.Max(1, nextAck - now)))
            {
                lastIo = Environment.TickCount64;
            }
            else if (Environment.TickCount64 - lastIo > TimeoutMs)
            {
                _log.LogWarning("MASTER timeout: no data nor PING received...");
                return;
            }
        }
    }

    /// <summary>What the full sync's loader reports while it reads (INFO master_sync_read_bytes).</summary>
    internal void ReportTransferred(long bytes) => Interlocked.Exchange(ref _transferRead, bytes);

    /// <summary>Stops the link and waits a little for its thread (at shutdown; the caller holds no shard).</summary>
    public void Dispose()
    {
        Stop();
        if (_thread.IsAlive && Thread.CurrentThread != _thread)
            _thread.Join(TimeSpan.FromSeconds(5));
    }
}
