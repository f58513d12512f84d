using System.Threading.RateLimiting;
using Microsoft.AspNetCore.RateLimiting;

namespace Diagnostics.Server.Api.Access;

/// <summary>
/// The endpoints that cost the server real work per call (the debug package, a stack capture, the
/// doctor, the keyspace walk) run one at a time, with a few more waiting (without a thread) and
/// the rest refused with 429: a flood of them (a script in a loop, a dashboard gone wild) cannot
/// take both of the diagnostics lane's threads, so the cheap views keep answering.
/// </summary>
public static class ExpensiveEndpoints
{
    public const string Policy = "expensive";
    public const int Concurrent = 1;
    public const int Queued = 4;

    public static IServiceCollection AddExpensiveEndpointLimit(this IServiceCollection services) =>
        services.AddRateLimiter(limiter =>
        {
            limiter.RejectionStatusCode = StatusCodes.Status429TooManyRequests;
            limiter.OnRejected = (context, cancellationToken) =>
            {
                context.HttpContext.Response.ContentType = "text/plain; charset=utf-8";
                return new ValueTask(context.HttpContext.Response.WriteAsync(
                    $"too many expensive diagnostics requests at once ({Concurrent} running, {Queued} waiting): {context.HttpContext.Request.Path} was refused; try again when one has finished",
                    cancellationToken));
            };
            limiter.AddConcurrencyLimiter(Policy, options =>
            {
                options.PermitLimit = Concurrent;
                options.QueueLimit = Queued;
                options.QueueProcessingOrder = QueueProcessingOrder.OldestFirst;
            });
        });

    /// <summary>Marks an endpoint as expensive: it runs under the <see cref="Policy"/> limit.</summary>
    public static TBuilder LimitedAsExpensive<TBuilder>(this TBuilder builder) where TBuilder : IEndpointConventionBuilder
        => builder.RequireRateLimiting(Policy);
}
