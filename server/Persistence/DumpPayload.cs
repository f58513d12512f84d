using System.Buffers.Binary;
using Diagnostics.Server.DataTypes.Streams;
using Diagnostics.Server.Engine;

namespace Diagnostics.Server.Persistence;

/// <summary>
/// DUMP's payload, as Redis's createDumpPayload writes it and verifyDumpPayload checks it: the
/// value's RDB type byte and encoding, then the RDB version (2 bytes) and the CRC-64 of everything
/// before it (8 bytes), both little-endian. Payloads of any RDB version this server reads are
/// accepted (Redis accepts up to its own). What RESTORE gets is hostile input: the value is read
/// by <see cref="RdbReader"/> with every check it makes, and built strictly (no member twice, no
/// empty collection), so a corrupt payload is refused, never half-loaded.
/// </summary>
internal static unsafe class DumpPayload
{
    public const string WrongVersionOrChecksum = "ERR DUMP payload version or checksum are wrong";
    public const string BadDataFormat = "ERR Bad data format";

    private const int TrailerSize = 10;

    /// <summary>Writes <paramref name="e"/>'s payload into <paramref name="writer"/>, which must be empty.</summary>
    public static void Write(RdbWriter writer, Entry* e)
    {
        writer.WriteValue(e);
        writer.WriteDumpTrailer();
    }

    /// <summary>True when the trailer names a version this server reads and the checksum matches.</summary>
    public static bool Verify(ReadOnlySpan<byte> payload)
    {
        if (payload.Length < TrailerSize)
            return false;
        ushort version = BinaryPrimitives.ReadUInt16LittleEndian(payload[^TrailerSize..]);
        if (version > RdbReader.MaxVersion)
            return false;
        return BinaryPrimitives.ReadUInt64LittleEndian(payload[^8..]) == Crc64.Compute(payload[..^8]);
    }

    /// <summary>
    /// A detached entry named <paramref name="key"/> holding the value of a verified payload, without
    /// expiry, in tracked memory; null when the value is corrupt or of a type this server lacks.
    /// Bytes between the value and the trailer are ignored, as Redis ignores them. The value takes
    /// the form <paramref name="config"/>'s limits give it now (packed or not, a list's node size).
    /// </summary>
    public static Entry* Read(ReadOnlySpan<byte> payload, ReadOnlySpan<byte> key, Configuration.ServerConfig config)
    {
        var visitor = new ValueVisitor(config);
        try
        {
            fixed (byte* bytes = payload)
            {
                using var stream = new UnmanagedMemoryStream(bytes, payload.Length - TrailerSize);
                RdbReader.ReadValue(stream, key, visitor);
            }
            return visitor.Take();
        }
        catch (Exception ex) when (ex is RdbFormatException or InvalidDataException or Memory.BlockTooLargeException)
        {
            // Corrupt, or an element too large for a block: refused like any bad payload.
            return null;
        }
        finally
        {
            visitor.Abandon();
        }
    }

    /// <summary>Builds the one value a payload holds.</summary>
    private sealed class ValueVisitor(Configuration.ServerConfig config)
        : RdbBuildingVisitor(new RdbEntryBuilder(strict: true, problem => new InvalidDataException(problem), config))
    {
        private Entry* _built;

        /// <summary>The value built, now the caller's.</summary>
        public Entry* Take()
        {
            Entry* e = _built;
            _built = null;
            if (e == null)
                throw new InvalidDataException("the payload holds no value");
            return e;
        }

        /// <summary>Frees whatever was built and not taken.</summary>
        public override void Abandon()
        {
            base.Abandon();
            if (_built != null)
                EntryStore.Free(_built);
            _built = null;
        }

        protected override void Built(Entry* e, long expireAt) => _built = e; // RESTORE takes the TTL from its arguments

        public override void String(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, long expireAtUnixMs)
            => _built = EntryStore.AllocateString(key, value);

        // A payload holds no opcodes: the reader never reports these for one value.
        public override void SelectDatabase(int index) { }
        public override void ResizeDatabase(long keys, long expires) { }
        public override void Aux(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value) { }
    }
}
