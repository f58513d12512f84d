namespace Diagnostics.Server.Commands;

/// <summary>Error replies in Redis's exact wording.</summary>
public static class Errors
{
    public const string Syntax = "ERR syntax error";
    public const string WrongType = "WRONGTYPE Operation against a key holding the wrong kind of value";
    public const string NotInteger = "ERR value is not an integer or out of range";
    public const string NotFloat = "ERR value is not a valid float";
    public const string Overflow = "ERR increment or decrement would overflow";
    public const string NoSuchKey = "ERR no such key";
    public const string DbIndexOutOfRange = "ERR DB index is out of range";
    public const string NoAuth = "NOAUTH Authentication required.";
    public const string OutOfMemory = "OOM command not allowed when used memory > 'maxmemory'.";
    public const string WrongPass = "WRONGPASS invalid username-password pair or user is disabled.";
    public const string InvalidExpire = "ERR invalid expire time in '{0}' command";
    public const string StringTooLong = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
    public const string OffsetOutOfRange = "ERR offset is out of range";
    public const string SourceDestinationSame = "ERR source and destination objects are the same";
    public const string DecrementOverflow = "ERR decrement would overflow";
    public const string FloatIncrementNotFinite = "ERR increment would produce NaN or Infinity";
    public const string LcsNotStrings = "ERR The specified keys must contain string values";
    public const string LcsLenWithIdx = "ERR If you want both the length and indexes, please just use IDX.";
    public const string LcsTableTooLarge = "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len";
    public const string LcsAllocationFailed = "ERR Insufficient memory, failed allocating transient memory for LCS";

    public static string WrongArity(string fullName) => $"ERR wrong number of arguments for '{fullName}' command";
    public static string UnknownSubcommand(string sub, string command) => $"ERR unknown subcommand '{Truncate(sub)}'. Try {command.ToUpperInvariant()} HELP.";

    public static string Truncate(string text) => text.Length > 128 ? text[..128] : text;
}
