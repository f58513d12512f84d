using Diagnostics.Contracts;
using Diagnostics.Server.Diagnostics.Info;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>INFO as data: the same text INFO returns, split into sections and fields, so the two never disagree.</summary>
public static class InfoView
{
    public static InfoReport Build(DataServer server, IReadOnlyCollection<string> sections)
    {
        string text = InfoBuilder.Build(server, sections.Count == 0 ? ["everything"] : sections);
        var report = new Dictionary<string, Dictionary<string, string>>();
        Dictionary<string, string>? current = null;
        foreach (string line in text.Split("\r\n"))
        {
            if (line.StartsWith("# ", StringComparison.Ordinal))
                report[line[2..].ToLowerInvariant()] = current = [];
            else if (current is not null && line.IndexOf(':') is > 0 and int colon)
                current[line[..colon]] = line[(colon + 1)..];
        }
        return new InfoReport(report);
    }
}
