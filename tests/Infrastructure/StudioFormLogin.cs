using System.Net;
using System.Text.RegularExpressions;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>
/// Logs in through the studio's own login form over real HTTP, as a browser posts it (the form's
/// hidden fields, its antiforgery cookie), and keeps the session cookie for the requests after.
/// </summary>
public sealed partial class StudioFormLogin : IDisposable
{
    private readonly HttpClient _http;

    private StudioFormLogin(HttpClient http, HttpStatusCode status, bool signedIn)
    {
        _http = http;
        Status = status;
        SignedIn = signedIn;
    }

    public HttpClient Http => _http;
    public HttpStatusCode Status { get; }
    /// <summary>The answer set the session cookie.</summary>
    public bool SignedIn { get; }

    public static StudioFormLogin Post(int httpPort, string user, string secret)
    {
        var cookies = new CookieContainer();
        var http = new HttpClient(new HttpClientHandler { CookieContainer = cookies, AllowAutoRedirect = false })
        {
            BaseAddress = new Uri($"http://127.0.0.1:{httpPort}"),
            Timeout = TimeSpan.FromSeconds(30),
        };
        string page = http.GetStringAsync("/login").GetAwaiter().GetResult();
        var fields = new List<KeyValuePair<string, string>>();
        foreach (Match hidden in HiddenInput().Matches(page))
            fields.Add(new(WebUtility.HtmlDecode(hidden.Groups["name"].Value), WebUtility.HtmlDecode(hidden.Groups["value"].Value)));
        Assert.Contains(fields, f => f.Key == "__RequestVerificationToken");
        fields.RemoveAll(f => f.Key == "ReturnUrl");
        fields.Add(new("ReturnUrl", "/"));
        fields.Add(new("User", user));
        fields.Add(new("Secret", secret));
        using var response = http.PostAsync("/login", new FormUrlEncodedContent(fields)).GetAwaiter().GetResult();
        bool signedIn = response.Headers.TryGetValues("Set-Cookie", out var set) && set.Any(c => c.StartsWith("diagnostics-studio=", StringComparison.Ordinal));
        return new StudioFormLogin(http, response.StatusCode, signedIn);
    }

    /// <summary>The status of a GET with the session cookie.</summary>
    public HttpStatusCode StatusOf(string path)
    {
        using var response = _http.GetAsync(path).GetAwaiter().GetResult();
        return response.StatusCode;
    }

    public void Dispose() => _http.Dispose();

    [GeneratedRegex("<input type=\"hidden\" name=\"(?<name>[^\"]+)\" value=\"(?<value>[^\"]*)\"")]
    private static partial Regex HiddenInput();
}
