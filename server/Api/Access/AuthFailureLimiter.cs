using System.Net;
using System.Threading.RateLimiting;
using Diagnostics.Server.Diagnostics.Info;

namespace Diagnostics.Server.Api.Access;

/// <summary>
/// Slows down guessing of the API key and the password over HTTP: each source address may fail
/// <see cref="FailuresAllowed"/> times in a burst, then one more every <see cref="RefillEvery"/>.
/// While its budget is spent, that address's requests that present a secret (a key, a bearer, the
/// login form) are refused with 429 before the secret is compared, right or wrong: otherwise
/// guessing would go on at full speed with only the misses refused. A studio session cookie is not
/// a guessable secret and passes. Failures and refusals are counted for INFO, /metrics and the doctor.
/// </summary>
public sealed class AuthFailureLimiter : IDisposable
{
    public const int FailuresAllowed = 10;
    public static readonly TimeSpan RefillEvery = TimeSpan.FromSeconds(6);

    private readonly ServerStats _stats;
    private readonly Lock _gate = new();
    private readonly ILogger _log;
    private readonly PartitionedRateLimiter<IPAddress> _limiter = PartitionedRateLimiter.Create<IPAddress, IPAddress>(address =>
        RateLimitPartition.GetTokenBucketLimiter(address, _ => new TokenBucketRateLimiterOptions
        {
            TokenLimit = FailuresAllowed,
            TokensPerPeriod = 1,
            ReplenishmentPeriod = RefillEvery,
            AutoReplenishment = true,
            QueueLimit = 0,
        }));

    public AuthFailureLimiter(ServerStats stats, ILogger<AuthFailureLimiter> log)
    {
        _stats = stats;
        _log = log;
    }

    /// <summary>
    /// Checks a presented secret unless the sender's address is over its budget. The check of the
    /// budget, the comparison and the charge for a miss happen under one lock: otherwise a burst of
    /// parallel guesses would all pass the budget check before the first miss is charged. The
    /// comparison is two SHA-256 hashes of short strings, so holding the lock costs microseconds.
    /// </summary>
    public AuthAttempt Attempt(HttpContext context, Func<bool> isRight, string what, out TimeSpan retryAfter)
    {
        var source = Source(context);
        retryAfter = TimeSpan.Zero;
        lock (_gate)
        {
            // The next failure's permit must be there before the secret is even compared; the bucket
            // gains one every RefillEvery, so that is the longest wait for it.
            if (IsOverBudget(source))
            {
                retryAfter = RefillEvery;
                _stats.HttpAuthRefusedForRate();
                return AuthAttempt.RateLimited;
            }
            if (isRight())
                return AuthAttempt.Accepted;
            using var charged = _limiter.AttemptAcquire(source, 1);
        }
        _stats.HttpAuthFailed();
        _log.LogWarning("HTTP authentication failed from {Address}: {What}", source, what);
        return AuthAttempt.Rejected;
    }

    /// <summary>
    /// Whether <paramref name="address"/> has spent its budget, so its next secret is refused
    /// unseen. Only asks: charges and counts nothing.
    /// </summary>
    public bool IsOverBudget(IPAddress address) => _limiter.GetStatistics(address) is { CurrentAvailablePermits: < 1 };

    /// <summary>
    /// Refuses a request that would present a secret from an address over its budget (see
    /// <see cref="IsOverBudget"/>): counted as a refusal, answered 429 with Retry-After.
    /// </summary>
    public Task RefuseOverBudgetAsync(HttpContext context)
    {
        _stats.HttpAuthRefusedForRate();
        return RefuseAsync(context, RefillEvery);
    }

    /// <summary>Writes the refusal: 429 with Retry-After in whole seconds.</summary>
    public static Task RefuseAsync(HttpContext context, TimeSpan retryAfter)
    {
        int seconds = Math.Max(1, (int)Math.Ceiling(retryAfter.TotalSeconds));
        context.Response.StatusCode = StatusCodes.Status429TooManyRequests;
        context.Response.Headers.RetryAfter = seconds.ToString(System.Globalization.CultureInfo.InvariantCulture);
        context.Response.ContentType = "text/plain; charset=utf-8";
        return context.Response.WriteAsync($"too many failed authentications from this address: try again in {seconds} s\n");
    }

    /// <summary>The address a request came from, an IPv4-mapped IPv6 address as the IPv4 one: what the budget is kept by.</summary>
    public static IPAddress Source(HttpContext context) =>
        context.Connection.RemoteIpAddress is { } address
            ? address.IsIPv4MappedToIPv6 ? address.MapToIPv4() : address
            : IPAddress.None;

    public void Dispose() => _limiter.Dispose();
}
