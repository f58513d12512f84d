using System.Diagnostics;
using System.Globalization;
using System.Text;

namespace Diagnostics.Server.Scripting;

/// <summary>
/// INFO's "scripts" section (not in the default INFO, as commandstats is not): whether a script is
/// running or keeping the server busy now and which, how often scripts ran past
/// busy-reply-threshold, were killed or moved off a socket engine thread, and every cached script's and function's calls and time,
/// by SHA1 or function name. The doctor and the debug package read it from INFO.
/// </summary>
internal static class ScriptInfo
{
    public static void Write(StringBuilder text, DataServer server)
    {
        var scripts = server.Scripts;
        var running = scripts.Running;
        var busy = scripts.BusyRun;
        Line(text, "script_running", running is null ? "0" : "1");
        Line(text, "script_busy", busy is null ? "0" : "1");
        Line(text, "script_running_name", running?.Name ?? "");
        Line(text, "script_running_ms", running is null ? "0" : ((long)running.ElapsedMs).ToString(CultureInfo.InvariantCulture));
        Line(text, "busy_scripts_total", scripts.BusyTotal.ToString(CultureInfo.InvariantCulture));
        Line(text, "killed_scripts_total", scripts.KilledTotal.ToString(CultureInfo.InvariantCulture));
        Line(text, "moved_scripts_total", scripts.MovedTotal.ToString(CultureInfo.InvariantCulture));
        Line(text, "last_busy_script", scripts.LastBusyName ?? "");
        Line(text, "last_busy_script_ms", scripts.LastBusyMs.ToString(CultureInfo.InvariantCulture));
        Line(text, "cached_scripts", scripts.CachedScripts.ToString(CultureInfo.InvariantCulture));
        Line(text, "libraries", scripts.Functions.Libraries.Count.ToString(CultureInfo.InvariantCulture));
        Line(text, "functions", scripts.Functions.FunctionCount.ToString(CultureInfo.InvariantCulture));
        foreach (var script in scripts.Scripts)
            Stats(text.Append("script_"), script).Append("\r\n");
        foreach (var library in scripts.Functions.Libraries)
            foreach (var function in library.Functions)
                Stats(text.Append("function_"), function).Append(",library=").Append(library.Name).Append("\r\n");
    }

    private static StringBuilder Stats(StringBuilder text, CompiledScript script)
    {
        long calls = Volatile.Read(ref script.Calls);
        long usec = (long)(Volatile.Read(ref script.Ticks) * 1_000_000.0 / Stopwatch.Frequency);
        long maxUsec = (long)(Volatile.Read(ref script.MaxTicks) * 1_000_000.0 / Stopwatch.Frequency);
        return text.Append(script.Name)
            .Append(":calls=").Append(calls.ToString(CultureInfo.InvariantCulture))
            .Append(",usec=").Append(usec.ToString(CultureInfo.InvariantCulture))
            .Append(",usec_per_call=").Append((calls == 0 ? 0 : (double)usec / calls).ToString("0.00", CultureInfo.InvariantCulture))
            .Append(",failed_calls=").Append(Volatile.Read(ref script.Errors).ToString(CultureInfo.InvariantCulture))
            .Append(",max_usec=").Append(maxUsec.ToString(CultureInfo.InvariantCulture));
    }

    private static void Line(StringBuilder text, string name, string value) => text.Append(name).Append(':').Append(value).Append("\r\n");
}
