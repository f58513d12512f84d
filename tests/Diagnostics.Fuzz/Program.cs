using Diagnostics.Fuzz.Harness;
using SharpFuzz;

// Diagnostics.Fuzz <target>                 under afl-fuzz (fuzz.sh): the SharpFuzz loop
// Diagnostics.Fuzz <target> <file|dir>...   replays saved inputs once each and prints what failed

if (args.Length == 0 || !FuzzTargets.Names.Contains(args[0]))
{
    Console.Error.WriteLine($"usage: Diagnostics.Fuzz <{string.Join('|', FuzzTargets.Names)}> [input file or folder...]");
    return 2;
}

if (args.Length > 1)
{
    var target = FuzzTargets.Create(args[0])!;
    int failed = 0, total = 0;
    foreach (string file in CorpusReplay.Files(args[1..]))
    {
        total++;
        if (CorpusReplay.RunFile(target, file) is { } error)
        {
            failed++;
            Console.WriteLine($"FAIL {file}\n{error}\n");
        }
    }
    Console.WriteLine($"{target.Name}: {total} inputs, {failed} failed");
    return failed == 0 ? 0 : 1;
}

// Out of process: the parent stays AFL's fork server and restarts the child after a crash, so
// the first finding does not end the run (in-process Fuzzer.Run aborted afl-fuzz with "Unable to
// communicate with fork server" at the resp target's first crash).
// The target is created on the first input, not before: instrumented code that runs before
// SharpFuzz has mapped AFL's coverage map faults (the aof target builds a ServerConfig, whose
// ProtocolLimits is instrumented: AccessViolationException before the first input).
IFuzzTarget? fuzzed = null;
var buffer = new MemoryStream();
Fuzzer.OutOfProcess.Run(stream =>
{
    fuzzed ??= FuzzTargets.Create(args[0])!;
    buffer.SetLength(0);
    stream.CopyTo(buffer);
    AllocationBudget.Run(fuzzed, buffer.GetBuffer().AsSpan(0, (int)buffer.Length));
});
return 0;
