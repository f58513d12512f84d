using System.Globalization;
using System.Text;

namespace Diagnostics.Server.Diagnostics.Latency;

/// <summary>
/// LATENCY GRAPH's text, character for character as Redis draws it: a title line, 80 dashes, then
/// an ASCII sparkline of the event's samples (oldest left, 4 rows, filled with '_', 'o', '#' and
/// '|'), each column labelled vertically with how long ago it happened (12s, 5m, 3h, 2d), in
/// blocks of 80 columns.
/// </summary>
public static class LatencyGraph
{
    private const int Columns = 80;
    private const int Rows = 4;
    private const string Levels = "_o#";
    private const int LabelMarginTop = 1;

    public static string Render(LatencyEventSnapshot evt, long nowUnixSeconds)
    {
        var samples = evt.Samples;
        long min = 0, max = 0;
        var labels = new string[samples.Count];
        for (int i = 0; i < samples.Count; i++)
        {
            long value = samples[i].Milliseconds;
            if (i == 0)
            {
                min = max = value;
            }
            else
            {
                max = Math.Max(max, value);
                min = Math.Min(min, value);
            }
            labels[i] = Ago(nowUnixSeconds - samples[i].UnixSeconds);
        }

        var text = new StringBuilder();
        text.Append(CultureInfo.InvariantCulture, $"{evt.Name} - high {max} ms, low {min} ms (all time high {evt.MaxMilliseconds} ms)\n");
        text.Append('-', Columns).Append('\n');
        for (int start = 0; start < samples.Count; start += Columns)
        {
            if (start != 0)
                text.Append('\n');
            RenderRange(text, samples, labels, min, max, start, Math.Min(Columns, samples.Count - start));
        }
        return text.ToString();
    }

    /// <summary>How long ago, in the largest unit that fits: seconds under a minute, then minutes, hours, days.</summary>
    private static string Ago(long seconds) => seconds switch
    {
        < 60 => $"{seconds}s",
        < 3600 => $"{seconds / 60}m",
        < 86400 => $"{seconds / 3600}h",
        _ => $"{seconds / 86400}d",
    };

    private static void RenderRange(StringBuilder text, IReadOnlyList<LatencySample> samples, string[] labels,
        long min, long max, int offset, int length)
    {
        double range = max - min;
        if (range == 0)
            range = 1;
        int steps = Levels.Length * Rows;
        var line = new char[length];
        for (int row = 0; ; row++)
        {
            bool more = false;
            Array.Fill(line, ' ');
            for (int j = 0; j < length; j++)
            {
                int step = (int)((int)((samples[offset + j].Milliseconds - min) * (double)steps) / range);
                step = Math.Clamp(step, 0, steps - 1);
                if (row < Rows)
                {
                    // Each row draws its third of the height; rows below the top of a bar are filled.
                    int level = step - (Rows - row - 1) * Levels.Length;
                    more = true;
                    if (level >= 0 && level < Levels.Length)
                        line[j] = Levels[level];
                    else if (level >= Levels.Length)
                        line[j] = '|';
                }
                else
                {
                    // One blank row between the bars and the labels, then the labels downwards.
                    if (row - Rows < LabelMarginTop)
                    {
                        more = true;
                        break;
                    }
                    int position = row - Rows - LabelMarginTop;
                    if (position < labels[offset + j].Length)
                    {
                        more = true;
                        line[j] = labels[offset + j][position];
                    }
                }
            }
            if (!more)
                return;
            text.Append(line).Append('\n');
        }
    }
}
