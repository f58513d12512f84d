using System.Security.Cryptography;
using System.Text;
using Diagnostics.Server.Configuration;
using Diagnostics.Studio.Security;

namespace Diagnostics.Server.Api;

/// <summary>
/// The studio's login follows the API's rule (<see cref="ApiGate"/>): needed exactly when the API
/// needs a key; the secret is that key, or the server's requirepass password.
/// </summary>
public sealed class StudioAccess(ServerConfig config) : IStudioAccess
{
    public bool LoginRequired => ApiGate.KeyRequired(config);

    public bool Accepts(string secret) => Matches(secret, config.HttpApiKey) || Matches(secret, config.RequirePass);

    /// <summary>Constant time in the secret's content, so timing tells an attacker nothing about how close a guess was.</summary>
    public static bool Matches(string presented, string? secret) =>
        secret is not null && CryptographicOperations.FixedTimeEquals(Encoding.UTF8.GetBytes(presented), Encoding.UTF8.GetBytes(secret));
}
