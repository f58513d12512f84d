namespace Diagnostics.Server.Engine;

/// <summary>Redis's logarithmic access frequency counter (LFU_INIT_VAL, lfu-log-factor 10).</summary>
public static class LfuCounter
{
    public const byte InitialValue = 5;
    private const int LogFactor = 10;

    public static byte Increment(byte counter, Random random)
    {
        if (counter == 255)
            return counter;
        double baseValue = Math.Max(0, counter - InitialValue);
        double p = 1.0 / (baseValue * LogFactor + 1);
        return random.NextDouble() < p ? (byte)(counter + 1) : counter;
    }
}
