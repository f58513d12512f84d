using System.Buffers.Binary;
using Diagnostics.Fuzz.Harness;
using Diagnostics.Server.Engine;
using Diagnostics.Server.Persistence;

namespace Diagnostics.Fuzz.Targets;

/// <summary>
/// RESTORE's payload path (<see cref="DumpPayload.Verify"/>, then <see cref="DumpPayload.Read"/>:
/// one RDB value of any type read into a detached entry). The input is run as sent, and again
/// behind a valid trailer (RDB version 10 and CRC64), so the fuzzer gets past the checksum to the
/// type byte, lengths, encodings, listpacks and stream nodes. A refusal is a null entry; anything
/// thrown is a crash. A value that loads is written back out, which walks all of it.
/// </summary>
public sealed unsafe class RestorePayloadTarget : IFuzzTarget
{
    /// <summary>The default limits (Redis's), which decide the form a loaded value takes.</summary>
    private static readonly Diagnostics.Server.Configuration.ServerConfig s_config = new();

    public string Name => "restore";

    public void Run(ReadOnlySpan<byte> input)
    {
        Restore(input);
        var sealedPayload = new byte[input.Length + 10];
        input.CopyTo(sealedPayload);
        BinaryPrimitives.WriteUInt16LittleEndian(sealedPayload.AsSpan(input.Length), RdbWriter.Version);
        BinaryPrimitives.WriteUInt64LittleEndian(sealedPayload.AsSpan(input.Length + 2), Crc64.Compute(sealedPayload.AsSpan(0, input.Length + 2)));
        Restore(sealedPayload);
    }

    private static void Restore(ReadOnlySpan<byte> payload)
    {
        if (!DumpPayload.Verify(payload))
            return;
        Entry* e = DumpPayload.Read(payload, "fuzz"u8, s_config);
        if (e == null)
            return;
        try
        {
            using var writer = new RdbWriter(RdbWriteOptions.Default);
            DumpPayload.Write(writer, e);
        }
        finally
        {
            EntryStore.Free(e);
        }
    }
}
