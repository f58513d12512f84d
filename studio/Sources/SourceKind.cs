namespace Diagnostics.Studio.Sources;

public enum SourceKind
{
    Live,
    Package,
}
