namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// A fresh server with the AOF on over a directory an earlier server wrote, asked what it loaded:
/// how many keys, and the values of the keys named (null: the key must be missing).
/// </summary>
public static class AofRestart
{
    public static void AssertLoads(string dir, long keys, params (string Key, string? Value)[] values)
    {
        using var server = ServerProcess.Start("--appendonly", "yes", "--dir", dir);
        using var c = server.Connect();
        RespAssert.Integer(keys, c.Call("DBSIZE"));
        foreach (var (key, value) in values)
        {
            if (value is null)
                RespAssert.Null(c.Call("GET", key));
            else
                RespAssert.Bulk(value, c.Call("GET", key));
        }
    }
}
