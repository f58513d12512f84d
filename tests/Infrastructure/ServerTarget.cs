namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// The two servers a side-by-side test runs against, by name ("diagnostics-server" or
/// "redis-server"): a [Theory] over both runs one test body on each.
/// </summary>
public static class ServerTarget
{
    public const string Ours = "diagnostics-server";
    public const string Redis = "redis-server";

    /// <summary>Starts <paramref name="target"/> with <paramref name="arguments"/>; dispose the server to stop it.</summary>
    public static (IDisposable Server, Func<RespClient> Connect) Start(string target, params string[] arguments)
    {
        if (target == Redis)
        {
            var redis = RealRedisServer.Start(arguments);
            return (redis, redis.Connect);
        }
        var ours = ServerProcess.Start(arguments);
        return (ours, ours.Connect);
    }
}
