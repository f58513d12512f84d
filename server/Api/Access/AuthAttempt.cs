namespace Diagnostics.Server.Api.Access;

/// <summary>How a presented secret fared at <see cref="AuthFailureLimiter.Attempt"/>.</summary>
public enum AuthAttempt
{
    Accepted,
    /// <summary>Wrong: counted and charged to the sender's address.</summary>
    Rejected,
    /// <summary>Not looked at: the sender's address has failed too often (429).</summary>
    RateLimited,
}
