namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// Runs a shell script as another, unprivileged user through setpriv (as the monitor's refusal
/// test starts the monitor): what a local user without privileges can do, such as planting files
/// in /tmp for a root process to find.
/// </summary>
public static class OtherUser
{
    /// <summary>nobody: a uid that owns nothing on the machine.</summary>
    public const int Nobody = 65534;

    /// <summary>Runs <c>sh -c script</c> as <paramref name="uid"/> with <paramref name="arguments"/> as $1...; fails the test if it fails.</summary>
    public static void Run(int uid, string script, params string[] arguments)
    {
        var result = ExternalTool.Run("setpriv", "util-linux",
            [$"--reuid={uid}", $"--regid={uid}", "--clear-groups", "--", "/bin/sh", "-c", script, "sh", .. arguments]);
        Assert.True(result.ExitCode == 0, $"as uid {uid}: {script} failed ({result.ExitCode}): {result.StandardError}");
    }
}
