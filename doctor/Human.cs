using System.Globalization;

namespace Diagnostics.Doctor;

/// <summary>Figures as people read them in findings: 1.5 MB, 12.3 ms, 45%.</summary>
public static class Human
{
    public static string Bytes(double bytes)
    {
        string[] units = ["B", "KB", "MB", "GB", "TB"];
        int unit = 0;
        while (Math.Abs(bytes) >= 1024 && unit < units.Length - 1)
        {
            bytes /= 1024;
            unit++;
        }
        return unit == 0 ? $"{bytes:0} B" : string.Create(CultureInfo.InvariantCulture, $"{bytes:0.#} {units[unit]}");
    }

    public static string Micros(double micros) => micros switch
    {
        >= 1_000_000 => string.Create(CultureInfo.InvariantCulture, $"{micros / 1_000_000:0.##} s"),
        >= 1000 => string.Create(CultureInfo.InvariantCulture, $"{micros / 1000:0.##} ms"),
        _ => string.Create(CultureInfo.InvariantCulture, $"{micros:0.#} µs"),
    };

    /// <summary>Milliseconds as the largest whole unit that reads naturally: "850 ms", "42 s", "7 min", "3 h", "2 days".</summary>
    public static string Duration(long milliseconds) => milliseconds switch
    {
        < 1000 => string.Create(CultureInfo.InvariantCulture, $"{milliseconds} ms"),
        < 120_000 => string.Create(CultureInfo.InvariantCulture, $"{milliseconds / 1000} s"),
        < 7_200_000 => string.Create(CultureInfo.InvariantCulture, $"{milliseconds / 60_000} min"),
        < 172_800_000 => string.Create(CultureInfo.InvariantCulture, $"{milliseconds / 3_600_000} h"),
        _ => string.Create(CultureInfo.InvariantCulture, $"{milliseconds / 86_400_000} days"),
    };

    public static string Percent(double percent) => string.Create(CultureInfo.InvariantCulture, $"{percent:0.#}%");

    public static string Number(double value) => value.ToString("#,0.##", CultureInfo.InvariantCulture);

    /// <summary>A count of things (keys, calls, refusals): a whole number, whatever arithmetic made it.</summary>
    public static string Count(double value) => Math.Round(value).ToString("#,0", CultureInfo.InvariantCulture);
}
