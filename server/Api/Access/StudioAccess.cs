using System.Security.Cryptography;
using System.Text;
using Diagnostics.Server.Configuration;
using Diagnostics.Studio.Security;

namespace Diagnostics.Server.Api.Access;

/// <summary>
/// The studio's login follows the API's rule (<see cref="ApiGate"/>): needed exactly when the API
/// needs a secret; the secret is the API key, or the server's requirepass password. A wrong one is
/// charged to the sender's address (<see cref="AuthFailureLimiter"/>).
/// </summary>
public sealed class StudioAccess(ServerConfig config, AuthFailureLimiter limiter) : IStudioAccess
{
    public bool LoginRequired => ApiGate.SecretRequired(config);

    public bool Accepts(string secret, HttpContext context) =>
        limiter.Attempt(context, () => IsSecret(secret, config), "wrong secret on the login form", out _) == AuthAttempt.Accepted;

    /// <summary>True when <paramref name="presented"/> is the API key or the requirepass password.</summary>
    public static bool IsSecret(string presented, ServerConfig config) =>
        Matches(presented, config.HttpApiKey) | Matches(presented, config.RequirePass);

    /// <summary>
    /// Constant time in the secret's content and length (both sides are hashed first), so timing
    /// tells an attacker nothing about how close a guess was.
    /// </summary>
    public static bool Matches(string presented, string? secret) =>
        secret is not null && CryptographicOperations.FixedTimeEquals(
            SHA256.HashData(Encoding.UTF8.GetBytes(presented)), SHA256.HashData(Encoding.UTF8.GetBytes(secret)));
}
