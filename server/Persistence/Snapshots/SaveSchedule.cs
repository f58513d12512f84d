using System.Globalization;
using System.Text;

namespace Diagnostics.Server.Persistence.Snapshots;

/// <summary>
/// The <c>save</c> setting: "seconds changes" pairs, each meaning "snapshot when at least
/// <c>changes</c> writes happened and <c>seconds</c> passed since the last snapshot". Parsed as
/// Redis does: pairs split on single spaces (so a doubled space is an empty, invalid field),
/// numbers as strtoll reads them (a sign and leading zeros allowed), seconds at least 1, changes
/// at least 0; "" turns snapshots off.
/// </summary>
public sealed class SaveSchedule
{
    // Redis's CONFIG_BGSAVE_RETRY_DELAY: after a failed snapshot, the schedule waits this long.
    public const int RetryDelaySeconds = 5;

    private readonly (long Seconds, long Changes)[] _points;

    private SaveSchedule((long, long)[] points) => _points = points;

    /// <summary>Redis 7's default when no configuration says otherwise.</summary>
    public static SaveSchedule Default { get; } = new([(3600, 1), (300, 100), (60, 10000)]);

    public static SaveSchedule None { get; } = new([]);

    public bool IsEmpty => _points.Length == 0;

    public static bool TryParse(string value, out SaveSchedule schedule)
    {
        schedule = None;
        if (value.Length == 0)
            return true;
        string[] fields = value.Split(' ');
        if (fields.Length % 2 != 0)
            return false;
        var points = new (long, long)[fields.Length / 2];
        for (int i = 0; i < points.Length; i++)
        {
            if (!TryParseStrtoll(fields[2 * i], out long seconds) || seconds < 1
                || !TryParseStrtoll(fields[2 * i + 1], out long changes) || changes < 0)
                return false;
            points[i] = (seconds, changes);
        }
        schedule = new SaveSchedule(points);
        return true;
    }

    // strtoll with Redis's "nothing may follow the number" check: an optional sign, digits.
    private static bool TryParseStrtoll(string text, out long value)
        => long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out value) && text.Length > 0 && !char.IsWhiteSpace(text[0]);

    /// <summary>
    /// Redis's serverCron test: some point is reached (enough changes, and more than its seconds
    /// since the last snapshot), and the last attempt did not fail less than the retry delay ago.
    /// </summary>
    public bool IsDue(long changes, long secondsSinceLastSave, long secondsSinceLastTry, bool lastFailed)
    {
        if (lastFailed && secondsSinceLastTry <= RetryDelaySeconds)
            return false;
        foreach (var (seconds, needed) in _points)
            if (changes >= needed && secondsSinceLastSave > seconds)
                return true;
        return false;
    }

    /// <summary>The point that made <see cref="IsDue"/> true, as Redis logs it ("1 changes in 3600 seconds").</summary>
    public string DescribeDue(long changes, long secondsSinceLastSave)
    {
        foreach (var (seconds, needed) in _points)
            if (changes >= needed && secondsSinceLastSave > seconds)
                return $"{needed} changes in {seconds} seconds";
        return "";
    }

    public override string ToString()
    {
        var text = new StringBuilder();
        foreach (var (seconds, changes) in _points)
        {
            if (text.Length > 0)
                text.Append(' ');
            text.Append(seconds.ToString(CultureInfo.InvariantCulture)).Append(' ').Append(changes.ToString(CultureInfo.InvariantCulture));
        }
        return text.ToString();
    }
}
