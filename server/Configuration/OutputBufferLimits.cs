using System.Globalization;
using System.Text;

namespace Diagnostics.Server.Configuration;

/// <summary>
/// One class's client-output-buffer-limit: a client whose unsent replies reach <see cref="HardBytes"/>
/// is closed at once; one that stays at or over <see cref="SoftBytes"/> for longer than
/// <see cref="SoftSeconds"/> is closed too. 0 turns a limit off.
/// </summary>
public readonly record struct OutputBufferLimit(ulong HardBytes, ulong SoftBytes, int SoftSeconds)
{
    public bool IsOff => HardBytes == 0 && SoftBytes == 0;

    /// <summary>As one class's group of the setting reads: "hard soft seconds".</summary>
    public override string ToString() => $"{HardBytes} {SoftBytes} {SoftSeconds}";
}

/// <summary>
/// The client-output-buffer-limit setting: a limit per <see cref="ClientClass"/>. Immutable, so a
/// connection reading it while CONFIG SET replaces it sees one consistent set.
/// Syntax and error texts are Redis's: "class hard soft seconds [class hard soft seconds ...]",
/// classes normal, replica (or slave) and pubsub, sizes with Redis's memory units; a value that
/// names only some classes leaves the others as they were; one bad group refuses the whole value.
/// </summary>
public sealed class OutputBufferLimits
{
    public const string WrongArgumentCount = "Wrong number of arguments in buffer limit configuration.";
    public const string InvalidClass = "Invalid client class specified in buffer limit configuration.";
    public const string InvalidValue = "Error in hard, soft or soft_seconds setting in buffer limit configuration.";

    private readonly OutputBufferLimit[] _limits;

    private OutputBufferLimits(OutputBufferLimit[] limits) => _limits = limits;

    /// <summary>Redis's defaults: normal unlimited, replica 256mb 64mb 60, pubsub 32mb 8mb 60.</summary>
    public static OutputBufferLimits Default { get; } = new(
    [
        new OutputBufferLimit(0, 0, 0),
        new OutputBufferLimit(256UL * 1024 * 1024, 64UL * 1024 * 1024, 60),
        new OutputBufferLimit(32UL * 1024 * 1024, 8UL * 1024 * 1024, 60),
    ]);

    public OutputBufferLimit this[ClientClass clientClass] => _limits[(int)clientClass];

    /// <summary>CONFIG GET's form: "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60".</summary>
    public override string ToString()
    {
        var text = new StringBuilder();
        string[] names = ["normal", "slave", "pubsub"];
        for (int i = 0; i < _limits.Length; i++)
        {
            if (i > 0)
                text.Append(' ');
            var limit = _limits[i];
            text.Append(names[i]).Append(' ')
                .Append(limit.HardBytes.ToString(CultureInfo.InvariantCulture)).Append(' ')
                .Append(limit.SoftBytes.ToString(CultureInfo.InvariantCulture)).Append(' ')
                .Append(limit.SoftSeconds.ToString(CultureInfo.InvariantCulture));
        }
        return text.ToString();
    }

    /// <summary>
    /// Applies <paramref name="value"/> on top of these limits. Returns null and the new set, or
    /// Redis's error text (and no change at all).
    /// </summary>
    public string? TryApply(string value, out OutputBufferLimits result)
    {
        result = this;
        string[] words = value.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        if (words.Length == 0)
            return null; // Redis accepts an empty value and changes nothing
        if (words.Length % 4 != 0)
            return WrongArgumentCount;
        var limits = (OutputBufferLimit[])_limits.Clone();
        for (int i = 0; i < words.Length; i += 4)
        {
            if (!TryParseClass(words[i], out var clientClass))
                return InvalidClass;
            if (!TryParseBytes(words[i + 1], out ulong hard) || !TryParseBytes(words[i + 2], out ulong soft)
                || !TryParseSeconds(words[i + 3], out int seconds))
                return InvalidValue;
            limits[(int)clientClass] = new OutputBufferLimit(hard, soft, seconds);
        }
        result = new OutputBufferLimits(limits);
        return null;
    }

    /// <summary>Redis's getClientTypeByName, without "master": a master's limits are not configurable.</summary>
    private static bool TryParseClass(string name, out ClientClass clientClass)
    {
        clientClass = name.ToLowerInvariant() switch
        {
            "normal" => ClientClass.Normal,
            "slave" or "replica" => ClientClass.Replica,
            "pubsub" => ClientClass.PubSub,
            _ => (ClientClass)(-1),
        };
        return clientClass >= 0;
    }

    /// <summary>
    /// Redis's memtoull: decimal digits, then an optional unit (b, k = 1000, kb = 1024, m, mb, g,
    /// gb, any case). No sign, no fraction. Like strtoull, a number too large saturates.
    /// </summary>
    private static bool TryParseBytes(string text, out ulong bytes)
    {
        bytes = 0;
        string t = text.ToLowerInvariant();
        ulong multiplier = 1;
        (string Suffix, ulong Factor)[] units = [("gb", 1UL << 30), ("mb", 1UL << 20), ("kb", 1UL << 10), ("g", 1_000_000_000), ("m", 1_000_000), ("k", 1000), ("b", 1)];
        foreach (var (suffix, factor) in units)
        {
            if (t.EndsWith(suffix, StringComparison.Ordinal))
            {
                multiplier = factor;
                t = t[..^suffix.Length];
                break;
            }
        }
        if (t.Length == 0)
            return false;
        ulong number = 0;
        foreach (char c in t)
        {
            if (c is < '0' or > '9')
                return false;
            number = number > (ulong.MaxValue - (ulong)(c - '0')) / 10 ? ulong.MaxValue : number * 10 + (ulong)(c - '0');
        }
        bytes = number > ulong.MaxValue / multiplier ? ulong.MaxValue : number * multiplier;
        return true;
    }

    /// <summary>Seconds as strtoll reads them (an optional sign), not negative, within an int.</summary>
    private static bool TryParseSeconds(string text, out int seconds)
    {
        seconds = 0;
        if (!long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out long value) || value < 0 || value > int.MaxValue)
            return false;
        seconds = (int)value;
        return true;
    }
}
