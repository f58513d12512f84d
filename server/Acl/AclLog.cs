using System.Text;

namespace Diagnostics.Server.Acl;

/// <summary>What an ACL LOG entry is about, with Redis's words for it.</summary>
public enum AclDenial
{
    Command,
    Key,
    Channel,
    Auth,
}

/// <summary>One ACL LOG entry: denials of one kind, object and user grouped while they repeat within a minute, as Redis groups them.</summary>
public sealed class AclLogEntry
{
    public required AclDenial Reason { get; init; }
    public required string Context { get; init; }
    public required string Object { get; init; }
    public required string Username { get; init; }
    public required string ClientInfo { get; set; }
    public long Count { get; set; } = 1;
    public long CreatedUnixMs { get; init; }
    public long UpdatedUnixMs { get; set; }

    public string ReasonName => Reason switch
    {
        AclDenial.Command => "command",
        AclDenial.Key => "key",
        AclDenial.Channel => "channel",
        _ => "auth",
    };
}

/// <summary>
/// ACL LOG: the last acllog-max-len denials and failed authentications, newest first. A denial
/// like one already logged less than a minute ago adds to its count instead (Redis's
/// ACL_LOG_GROUPING_MAX_TIME_DELTA). Never the password of a failed AUTH: only the user named.
/// </summary>
public sealed class AclLog
{
    private const long GroupingMs = 60_000;
    private readonly Lock _gate = new();
    private readonly LinkedList<AclLogEntry> _entries = new();

    public int MaxLength { get; set; } = 128;

    public void Add(AclDenial reason, string context, string obj, string username, string clientInfo)
    {
        long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        lock (_gate)
        {
            for (var node = _entries.First; node is not null; node = node.Next)
            {
                var entry = node.Value;
                if (entry.Reason == reason && entry.Context == context && entry.Object == obj && entry.Username == username
                    && now - entry.UpdatedUnixMs < GroupingMs)
                {
                    entry.Count++;
                    entry.UpdatedUnixMs = now;
                    entry.ClientInfo = clientInfo;
                    _entries.Remove(node);
                    _entries.AddFirst(node);
                    return;
                }
            }
            _entries.AddFirst(new AclLogEntry
            {
                Reason = reason, Context = context, Object = obj, Username = username, ClientInfo = clientInfo,
                CreatedUnixMs = now, UpdatedUnixMs = now,
            });
            while (_entries.Count > Math.Max(0, MaxLength))
                _entries.RemoveLast();
        }
    }

    /// <summary>The newest <paramref name="count"/> entries (all when null).</summary>
    public List<AclLogEntry> Newest(int? count)
    {
        lock (_gate)
            return [.. _entries.Take(count ?? int.MaxValue)];
    }

    public int Count
    {
        get
        {
            lock (_gate)
                return _entries.Count;
        }
    }

    public void Reset()
    {
        lock (_gate)
            _entries.Clear();
    }
}
