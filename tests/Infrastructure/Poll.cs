namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>Waits for a condition the server reaches asynchronously (a closed client leaving CLIENT LIST, say).</summary>
public static class Poll
{
    public static void Until(Func<bool> condition, string what, int timeoutMs = 10_000) => Until(condition, () => what, timeoutMs);

    /// <summary>As above, with the description built when the wait fails, so it can show the state it ended in.</summary>
    public static void Until(Func<bool> condition, Func<string> what, int timeoutMs = 10_000)
    {
        var deadline = DateTime.UtcNow.AddMilliseconds(timeoutMs);
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
                Assert.Fail($"timed out after {timeoutMs} ms waiting until {what()}");
            Thread.Sleep(20);
        }
    }
}
