using System.Globalization;

namespace Diagnostics.Studio;

/// <summary>Figures for people, beside <see cref="Diagnostics.Doctor.Human"/> (bytes, µs/ms, percent) which the findings use.</summary>
public static class Format
{
    /// <summary>3d 4h, 5h 12m, 7m 30s, 42s.</summary>
    public static string Duration(long seconds) => seconds switch
    {
        >= 86400 => string.Create(CultureInfo.InvariantCulture, $"{seconds / 86400}d {seconds % 86400 / 3600}h"),
        >= 3600 => string.Create(CultureInfo.InvariantCulture, $"{seconds / 3600}h {seconds % 3600 / 60}m"),
        >= 60 => string.Create(CultureInfo.InvariantCulture, $"{seconds / 60}m {seconds % 60}s"),
        _ => string.Create(CultureInfo.InvariantCulture, $"{seconds}s"),
    };

    /// <summary>"1.0.0+43fd4a151f..." as "1.0.0 (43fd4a1)": the build's commit, short.</summary>
    public static string Version(string version)
    {
        int plus = version.IndexOf('+');
        return plus < 0 ? version : $"{version[..plus]} ({version[(plus + 1)..Math.Min(version.Length, plus + 8)]})";
    }

    public static string Time(long unixMs) =>
        DateTimeOffset.FromUnixTimeMilliseconds(unixMs).UtcDateTime.ToString("yyyy-MM-dd HH:mm:ss 'UTC'", CultureInfo.InvariantCulture);
}
