using System.Runtime.Versioning;
using Diagnostics.Fuzz.Harness;
using Diagnostics.Monitor.Attach;

namespace Diagnostics.Fuzz.Targets;

/// <summary>
/// The root monitor's announcement verifier (<see cref="AnnouncementVerifier.Verify"/>) on a file
/// an unprivileged user could have written: the input is the file, in a folder closed to others
/// (0700, the file 0600) so every file check passes and the bytes reach the JSON reader, the field
/// checks and, for an announcement that parsed, the ingest URL check. The pid and port checks read
/// /proc for whatever pid the input names: not fuzzed (they take two integers, and the answers
/// would change with the machine's processes), so the "wanted" filter stops there. The verifier
/// documents no exception: every refusal is a problem text, and anything thrown is a crash. A
/// refusal of the sandbox itself (folder or file trust) fails the input too, so a broken
/// environment can never pass the corpus test without parsing anything.
/// </summary>
[SupportedOSPlatform("linux")]
public sealed class AnnouncementTarget : IFuzzTarget
{
    private const UnixFileMode OwnerOnlyFolder = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute;
    private const UnixFileMode OwnerOnlyFile = UnixFileMode.UserRead | UnixFileMode.UserWrite;

    private readonly string _path;

    public AnnouncementTarget()
    {
        File.SetUnixFileMode(Sandbox.Folder, OwnerOnlyFolder); // the folders above are checked too
        string folder = Path.Combine(Sandbox.Folder, "announcement");
        Directory.CreateDirectory(folder, OwnerOnlyFolder);
        File.SetUnixFileMode(folder, OwnerOnlyFolder); // whatever the umask made of it
        _path = Path.Combine(folder, "server-1.json");
    }

    public string Name => "announcement";

    public void Run(ReadOnlySpan<byte> input)
    {
        using (var file = new FileStream(_path, new FileStreamOptions { Mode = FileMode.Create, Access = FileAccess.Write, UnixCreateMode = OwnerOnlyFile }))
            file.Write(input);
        File.SetUnixFileMode(_path, OwnerOnlyFile);

        var (announcement, problem) = AnnouncementVerifier.Verify(_path, static found =>
        {
            AnnouncementVerifier.IngestEndpoint(found.IngestUrl);
            return false;
        });
        if (announcement is not null)
            throw new InvalidOperationException("an announcement passed although the filter wanted none");
        if (problem is not null && !problem.StartsWith("it is not an announcement", StringComparison.Ordinal)
            && !problem.StartsWith("it is larger than", StringComparison.Ordinal))
            throw new InvalidOperationException($"the sandbox itself was refused, so the input was never parsed: {problem}");
    }
}
