using System.Security.Cryptography;
using System.Text;

namespace Diagnostics.Server.Api.Access;

/// <summary>Comparisons and stamps of secrets, none of which reveals the secret or how close a guess was.</summary>
public static class Secrets
{
    /// <summary>Constant time in the secret's content and length (both sides are hashed first).</summary>
    public static bool Matches(string presented, string? secret) =>
        secret is not null && CryptographicOperations.FixedTimeEquals(
            SHA256.HashData(Encoding.UTF8.GetBytes(presented)), SHA256.HashData(Encoding.UTF8.GetBytes(secret)));

    /// <summary>A short digest that changes when the secret does; kept in a signed session cookie, never the secret.</summary>
    public static string Stamp(string secret) => Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes("diagnostics-session\n" + secret)))[..32];
}
