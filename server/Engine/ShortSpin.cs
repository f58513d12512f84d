namespace Diagnostics.Server.Engine;

/// <summary>
/// Taking a lock another thread holds only briefly (a shard's for a command or two, the keyspace
/// gate's for a script): a short spin, with no yield and no sleep, often gets it, and then the
/// caller sends its own reply on its own thread instead of adding the send to the holder's turn,
/// which at pipeline 1 is most of a command's cost. Past it, callers hand their work over.
/// </summary>
internal static class ShortSpin
{
    // About two microseconds.
    private const int Rounds = 8;
    private const int IterationsPerRound = 16;

    public static bool TryEnter(Lock gate)
    {
        for (int i = 0; i < Rounds; i++)
        {
            Thread.SpinWait(IterationsPerRound);
            if (gate.TryEnter())
                return true;
        }
        return false;
    }
}
