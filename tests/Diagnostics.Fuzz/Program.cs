using Diagnostics.Fuzz.Harness;
using SharpFuzz;

// Diagnostics.Fuzz <target>                 under afl-fuzz (fuzz.sh): the persistent SharpFuzz loop
// Diagnostics.Fuzz <target> <file|dir>...   replays saved inputs once each and prints what failed

if (args.Length == 0 || FuzzTargets.Create(args[0]) is not { } target)
{
    Console.Error.WriteLine($"usage: Diagnostics.Fuzz <{string.Join('|', FuzzTargets.Names)}> [input file or folder...]");
    return 2;
}

if (args.Length > 1)
{
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

var buffer = new MemoryStream();
Fuzzer.Run(stream =>
{
    buffer.SetLength(0);
    stream.CopyTo(buffer);
    AllocationBudget.Run(target, buffer.GetBuffer().AsSpan(0, (int)buffer.Length));
});
return 0;
