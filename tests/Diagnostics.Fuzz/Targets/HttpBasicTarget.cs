using System.Text;
using Diagnostics.Fuzz.Harness;
using Diagnostics.Server.Api.Access;

namespace Diagnostics.Fuzz.Targets;

/// <summary>
/// An Authorization: Basic header's value, which anyone reaching the HTTP listener can send
/// (<see cref="BasicCredentials.Decode"/>). It documents no exception: anything that is not
/// base64 of UTF-8 "user:password" within the bound is null. What it accepts must encode back to
/// the same credentials, and the user never holds a colon.
/// </summary>
public sealed class HttpBasicTarget : IFuzzTarget
{
    public string Name => "http-basic";

    public void Run(ReadOnlySpan<byte> input)
    {
        // As Kestrel hands header values over: one char per byte (Latin-1).
        string header = Encoding.Latin1.GetString(input);
        if (BasicCredentials.Decode(header) is not var (user, password))
            return;
        if (user.Contains(':'))
            throw new InvalidOperationException($"the user '{user}' holds a colon");
        string again = Convert.ToBase64String(Encoding.UTF8.GetBytes(user + ":" + password));
        if (BasicCredentials.Decode(again) != (user, password))
            throw new InvalidOperationException($"'{user}:{password}' does not decode back from its own encoding");
    }
}
