namespace Diagnostics.Fuzz.Harness;

/// <summary>
/// One parser that takes outside bytes, driven the way the server drives it. A target swallows
/// the parser's own documented exceptions (format and limit errors: the input was refused, as it
/// should be); anything else escapes and is a crash to AFL and a failure to the corpus test.
/// </summary>
public interface IFuzzTarget
{
    /// <summary>The name fuzz.sh and the corpus folder use: resp, aof, rdb, config, package, announcement, function-dump.</summary>
    string Name { get; }

    void Run(ReadOnlySpan<byte> input);
}
