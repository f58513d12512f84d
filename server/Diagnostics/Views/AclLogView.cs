using Diagnostics.Contracts;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>ACL LOG as records, newest first: what the studio's Security page shows and the debug package keeps.</summary>
public static class AclLogView
{
    public static AclLogRecord[] Build(DataServer server)
    {
        var entries = server.AclLog.Newest(null);
        var records = new AclLogRecord[entries.Count];
        for (int i = 0; i < records.Length; i++)
        {
            var e = entries[i];
            records[i] = new AclLogRecord(e.Count, e.ReasonName, e.Context, e.Object, e.Username, e.ClientInfo, e.CreatedUnixMs, e.UpdatedUnixMs);
        }
        return records;
    }
}
