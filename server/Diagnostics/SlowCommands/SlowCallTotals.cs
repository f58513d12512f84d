namespace Diagnostics.Server.Diagnostics.SlowCommands;

/// <summary>
/// Slow calls counted by command and by client since start or SLOWLOG RESET. The log keeps only
/// the newest slowlog-max-len entries, so its length is not how many calls were slow nor who made
/// them. The caller (the slow log) holds its lock; only slow calls reach here, so the dictionaries
/// cost nothing on the data path. Clients are bounded: past the cap, the one with the fewest slow
/// calls makes room, so whoever keeps being slow stays listed.
/// </summary>
public sealed class SlowCallTotals
{
    private const int MaxClients = 64;

    private readonly Dictionary<string, CommandTotal> _commands = new(StringComparer.Ordinal);
    private readonly Dictionary<long, ClientTotal> _clients = [];
    private long _calls;
    private long _sinceUnixSeconds = DateTimeOffset.UtcNow.ToUnixTimeSeconds();

    public sealed record CommandTotal(string Command, long Calls, long Micros, long MaxMicros);

    public sealed record ClientTotal(long Id, string Address, string Name, long Calls, long MaxMicros, string LastCommand, long LastUnixSeconds);

    public sealed record Summary(long SinceUnixSeconds, long Calls, List<CommandTotal> Commands, List<ClientTotal> Clients);

    public void Add(string command, long micros, long unixSeconds, long clientId, string clientAddress, string clientName)
    {
        _calls++;
        _commands[command] = _commands.TryGetValue(command, out var total)
            ? total with { Calls = total.Calls + 1, Micros = total.Micros + micros, MaxMicros = Math.Max(total.MaxMicros, micros) }
            : new CommandTotal(command, 1, micros, micros);
        if (_clients.TryGetValue(clientId, out var client))
        {
            _clients[clientId] = client with
            {
                Address = clientAddress, Name = clientName, Calls = client.Calls + 1,
                MaxMicros = Math.Max(client.MaxMicros, micros), LastCommand = command, LastUnixSeconds = unixSeconds,
            };
            return;
        }
        if (_clients.Count >= MaxClients)
            _clients.Remove(FewestCalls());
        _clients[clientId] = new ClientTotal(clientId, clientAddress, clientName, 1, micros, command, unixSeconds);
    }

    private long FewestCalls()
    {
        long id = 0, fewest = long.MaxValue;
        foreach (var (key, client) in _clients)
        {
            if (client.Calls < fewest)
                (id, fewest) = (key, client.Calls);
        }
        return id;
    }

    public void Clear()
    {
        _commands.Clear();
        _clients.Clear();
        _calls = 0;
        _sinceUnixSeconds = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
    }

    /// <summary>A copy, commands and clients with the most slow calls first.</summary>
    public Summary Snapshot()
    {
        var commands = new List<CommandTotal>(_commands.Values);
        commands.Sort((a, b) => b.Calls != a.Calls ? b.Calls.CompareTo(a.Calls) : b.MaxMicros.CompareTo(a.MaxMicros));
        var clients = new List<ClientTotal>(_clients.Values);
        clients.Sort((a, b) => b.Calls != a.Calls ? b.Calls.CompareTo(a.Calls) : b.MaxMicros.CompareTo(a.MaxMicros));
        return new Summary(_sinceUnixSeconds, _calls, commands, clients);
    }
}
