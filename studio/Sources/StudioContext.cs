namespace Diagnostics.Studio.Sources;

/// <summary>
/// What the layout hands every page: the source to render and the prefix of links that stay on
/// it (empty for the live server, "package/ID/" for an opened package).
/// </summary>
public sealed record StudioContext(IStudioSource Source, string LinkPrefix)
{
    /// <summary>The address of a studio page on this source; "" is the dashboard.</summary>
    public string Link(string page) => page.Length == 0 && LinkPrefix.Length > 0 ? LinkPrefix[..^1] : LinkPrefix + page;
}
