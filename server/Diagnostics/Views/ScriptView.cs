using System.Diagnostics;
using System.Text;
using Diagnostics.Contracts;
using Diagnostics.Server.Scripting;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>The scripts and functions with their stats (GET /api/scripts, scripts.json in the debug package).</summary>
public static class ScriptView
{
    /// <param name="withSource">Include each script's source: only on an operator's explicit ask, as a script may embed secrets.</param>
    public static ScriptReport Build(DataServer server, bool withSource)
    {
        var engine = server.Scripts;
        var list = new List<ScriptStatistics>();
        foreach (var script in engine.Scripts)
            list.Add(Statistics(script, "script", null, FlagNames(script.Flags), null, withSource ? Encoding.UTF8.GetString(script.Body) : null));
        foreach (var library in engine.Functions.Libraries)
            foreach (var function in library.Functions)
                list.Add(Statistics(function, "function", library.Name, function.FlagNames, function.Description, withSource ? Encoding.UTF8.GetString(library.Code) : null));
        var running = engine.Running;
        return new ScriptReport
        {
            Scripts = list,
            Running = running is null ? null : new RunningScript
            {
                Name = running.Name,
                ElapsedMs = (long)running.ElapsedMs,
                Busy = running.Busy,
                ClientId = running.Caller?.Id ?? 0,
            },
            EvalVmBytes = engine.EvalVmBytes,
            FunctionsVmBytes = engine.Functions.VmBytes,
            BusyTotal = engine.BusyTotal,
            KilledTotal = engine.KilledTotal,
        };
    }

    private static ScriptStatistics Statistics(CompiledScript script, string kind, string? library, IReadOnlyList<string> flags, string? description, string? source) => new()
    {
        Kind = kind,
        Name = script.Name,
        Library = library,
        Flags = flags,
        Description = description,
        Calls = Volatile.Read(ref script.Calls),
        Microseconds = (long)(Volatile.Read(ref script.Ticks) * 1_000_000.0 / Stopwatch.Frequency),
        FailedCalls = Volatile.Read(ref script.Errors),
        MaxMicroseconds = (long)(Volatile.Read(ref script.MaxTicks) * 1_000_000.0 / Stopwatch.Frequency),
        Source = source,
    };

    private static List<string> FlagNames(ScriptFlags flags)
    {
        var names = new List<string>();
        foreach (var (flag, name) in ScriptFlagNames.All)
            if ((flags & flag) != 0)
                names.Add(name);
        return names;
    }
}
