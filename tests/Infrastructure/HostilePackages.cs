using System.Buffers.Binary;
using System.IO.Compression;
using System.Text;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// Debug packages built to hurt whoever opens them: a valid manifest, plus an entry that unpacks
/// to far more than the zip weighs, an entry whose headers understate its size, or entries whose
/// names or number a package never has.
/// </summary>
public static class HostilePackages
{
    private const string Manifest = """
        {"format":1,"product":"Diagnostics.Server","productVersion":"1.0.0","host":"hostile-host","operatingSystem":"Linux",
         "processId":4242,"uptimeSeconds":60,"takenAt":"2026-11-25T21:00:00+00:00","entries":[]}
        """;

    /// <summary>
    /// history.json as valid JSON holding <paramref name="samples"/> zero timestamps ("0," each):
    /// deflate packs it about 1000 to 1, and each 2 bytes become an 8-byte long on the heap.
    /// </summary>
    public static byte[] Bomb(long samples)
    {
        return Zip(zip =>
        {
            AddText(zip, "manifest.json", Manifest);
            using var history = zip.CreateEntry("history.json", CompressionLevel.SmallestSize).Open();
            history.Write("""{"intervalMillis":1000,"times":[0"""u8);
            byte[] zeros = Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat(",0", 32 * 1024)));
            for (long written = 1; written < samples; written += zeros.Length / 2)
                history.Write(zeros);
            history.Write("""],"series":{}}"""u8);
        });
    }

    /// <summary>A package whose <paramref name="entry"/> holds <paramref name="bytes"/> of text (declared truthfully).</summary>
    public static byte[] OneHugeEntry(string entry, long bytes) => Zip(zip =>
    {
        AddText(zip, "manifest.json", Manifest);
        using var huge = zip.CreateEntry(entry, CompressionLevel.SmallestSize).Open();
        byte[] line = Encoding.ASCII.GetBytes(new string('a', 1023) + "\n");
        for (long written = 0; written < bytes; written += line.Length)
            huge.Write(line);
    });

    /// <summary>
    /// history.json of <paramref name="bytes"/> (valid JSON, mostly spaces) whose local and central
    /// headers both claim 100 bytes: only counting what is unpacked catches it.
    /// </summary>
    public static byte[] UnderstatedEntry(long bytes)
    {
        byte[] zipBytes = Zip(zip =>
        {
            AddText(zip, "manifest.json", Manifest);
            using var history = zip.CreateEntry("history.json", CompressionLevel.SmallestSize).Open();
            history.Write("""{"intervalMillis":1000,"times":[0"""u8);
            byte[] spaces = Encoding.ASCII.GetBytes(new string(' ', 64 * 1024));
            for (long written = 0; written < bytes; written += spaces.Length)
                history.Write(spaces);
            history.Write("""],"series":{}}"""u8);
        });
        PatchDeclaredSize(zipBytes, "history.json", 100);
        return zipBytes;
    }

    /// <summary>A valid manifest plus entries with exactly these names (repeats allowed).</summary>
    public static byte[] WithEntries(params string[] names) => Zip(zip =>
    {
        AddText(zip, "manifest.json", Manifest);
        foreach (string name in names)
            AddText(zip, name, "{}");
    });

    /// <summary>
    /// A manifest whose lists hold nulls where the server writes objects (an entry, a part left out),
    /// claiming to be a partial package: its pages must still render.
    /// </summary>
    public static byte[] NullsInManifestLists() => Zip(zip =>
        AddText(zip, "manifest.json", Manifest.Replace("\"entries\":[]", "\"entries\":[null],\"takenBy\":\"user 'mallory'\",\"omitted\":[null,{\"name\":\"clients.json\"}]", StringComparison.Ordinal)));

    private static byte[] Zip(Action<ZipArchive> fill)
    {
        var buffer = new MemoryStream();
        using (var zip = new ZipArchive(buffer, ZipArchiveMode.Create, leaveOpen: true))
            fill(zip);
        return buffer.ToArray();
    }

    private static void AddText(ZipArchive zip, string name, string text)
    {
        using var stream = zip.CreateEntry(name).Open();
        stream.Write(Encoding.UTF8.GetBytes(text));
    }

    /// <summary>Rewrites the uncompressed size in the entry's local header and central directory record.</summary>
    private static void PatchDeclaredSize(byte[] zip, string name, uint declared)
    {
        byte[] nameBytes = Encoding.UTF8.GetBytes(name);
        int patched = 0;
        for (int at = 0; at + 46 + nameBytes.Length <= zip.Length; at++)
        {
            uint signature = BinaryPrimitives.ReadUInt32LittleEndian(zip.AsSpan(at));
            if (signature == 0x04034b50 && zip.AsSpan(at + 30, nameBytes.Length).SequenceEqual(nameBytes))
            {
                BinaryPrimitives.WriteUInt32LittleEndian(zip.AsSpan(at + 22), declared);
                patched++;
            }
            else if (signature == 0x02014b50 && zip.AsSpan(at + 46, nameBytes.Length).SequenceEqual(nameBytes))
            {
                BinaryPrimitives.WriteUInt32LittleEndian(zip.AsSpan(at + 24), declared);
                patched++;
            }
        }
        if (patched != 2)
            throw new InvalidOperationException($"found {patched} headers of {name} to patch, expected 2");
    }
}
