using System.Text;
using Diagnostics.Server.Diagnostics.Info;

namespace Diagnostics.Server.Acl;

/// <summary>
/// INFO acl (this server's own section): the users, ACL LOG's size, and the sources of failed
/// authentications, the ten with the most failures as "addr=...,user=...,count=...,last=..." lines.
/// </summary>
public static class AclInfo
{
    public const int SourcesShown = 10;

    public static void Write(StringBuilder text, DataServer server)
    {
        InfoBuilder.Field(text, "acl_users", server.Acl.All.Count);
        InfoBuilder.Field(text, "acl_log_entries", server.AclLog.Count);
        InfoBuilder.Field(text, "auth_failure_sources", server.AuthFailures.Count);
        var top = server.AuthFailures.Top(SourcesShown);
        for (int i = 0; i < top.Count; i++)
        {
            var source = top[i];
            text.Append("auth_failure_source_").Append(i)
                .Append(":addr=").Append(InfoBuilder.FieldSafe(source.Address))
                .Append(",user=").Append(InfoBuilder.FieldSafe(source.User))
                .Append(",count=").Append(source.Count)
                .Append(",first=").Append(source.FirstUnixMs / 1000)
                .Append(",last=").Append(source.LastUnixMs / 1000)
                .Append("\r\n");
        }
    }
}
