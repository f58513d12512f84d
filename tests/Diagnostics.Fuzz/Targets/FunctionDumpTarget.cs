using System.Buffers.Binary;
using Diagnostics.Fuzz.Harness;
using Diagnostics.Server.Persistence;
using Diagnostics.Server.Scripting.Functions;

namespace Diagnostics.Fuzz.Targets;

/// <summary>
/// FUNCTION RESTORE's payload reader (<see cref="FunctionDump.TryRead"/>) and the library
/// metadata parser each restored library's code goes through. The input is run as sent, and
/// again as a body behind a valid footer (RDB version and CRC64), so the fuzzer gets past the
/// checksum to the opcodes, lengths and LZF strings. Neither documents an exception: a refusal is
/// an error text, and anything thrown is a crash.
/// </summary>
public sealed class FunctionDumpTarget : IFuzzTarget
{
    public string Name => "function-dump";

    public void Run(ReadOnlySpan<byte> input)
    {
        Read(input);
        var sealedPayload = new byte[input.Length + 10];
        input.CopyTo(sealedPayload);
        BinaryPrimitives.WriteUInt16LittleEndian(sealedPayload.AsSpan(input.Length), 10);
        BinaryPrimitives.WriteUInt64LittleEndian(sealedPayload.AsSpan(input.Length + 2), Crc64.Compute(sealedPayload.AsSpan(0, input.Length + 2)));
        Read(sealedPayload);
    }

    private static void Read(ReadOnlySpan<byte> payload)
    {
        var codes = new List<byte[]>();
        if (!FunctionDump.TryRead(payload, codes, out string? error))
        {
            if (string.IsNullOrEmpty(error))
                throw new InvalidOperationException("a refused payload came without an error text");
            return;
        }
        foreach (var code in codes)
        {
            if (!LibraryMetadata.TryParse(code, out string name, out int length, out string? problem) && string.IsNullOrEmpty(problem))
                throw new InvalidOperationException("refused library metadata came without an error text");
            if (problem is null && (name.Length == 0 || length > code.Length))
                throw new InvalidOperationException($"metadata parsed to name '{name}' and length {length} of {code.Length}");
        }
    }
}
