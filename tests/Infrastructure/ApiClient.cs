using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>The server's HTTP API over real HTTP, reading answers as the contract types.</summary>
public sealed class ApiClient : IDisposable
{
    private readonly HttpClient _http;

    public ApiClient(int httpPort, string? apiKey = null)
    {
        _http = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{httpPort}"), Timeout = TimeSpan.FromSeconds(60) };
        if (apiKey is not null)
            _http.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Bearer", apiKey);
    }

    public HttpClient Http => _http;

    public T Get<T>(string path, JsonTypeInfo<T> type)
    {
        using var response = _http.GetAsync(path).GetAwaiter().GetResult();
        string body = response.Content.ReadAsStringAsync().GetAwaiter().GetResult();
        Assert.True(response.IsSuccessStatusCode, $"GET {path} answered {(int)response.StatusCode}: {body}");
        return JsonSerializer.Deserialize(body, type) ?? throw new InvalidOperationException($"GET {path} returned null");
    }

    public string GetText(string path)
    {
        using var response = _http.GetAsync(path).GetAwaiter().GetResult();
        string body = response.Content.ReadAsStringAsync().GetAwaiter().GetResult();
        Assert.True(response.IsSuccessStatusCode, $"GET {path} answered {(int)response.StatusCode}: {body}");
        return body;
    }

    public HttpResponseMessage Send(HttpRequestMessage request) => _http.SendAsync(request).GetAwaiter().GetResult();

    /// <summary>
    /// A request built by hand, as another site's page, a rebinding page or a script sends it: any
    /// method and path spelling, headers this client would not add (Host, Origin, X-Api-Key), and an
    /// optional JSON body. The caller disposes the response.
    /// </summary>
    public HttpResponseMessage Send(HttpMethod method, string path, string? json, params (string Name, string Value)[] headers)
    {
        using var request = new HttpRequestMessage(method, path);
        if (json is not null)
            request.Content = new StringContent(json, Encoding.UTF8, "application/json");
        foreach (var (name, value) in headers)
        {
            if (name == "Host")
                request.Headers.Host = value;
            else
                request.Headers.Add(name, value);
        }
        return Send(request);
    }

    /// <summary>The status a hand-built request without a body gets.</summary>
    public HttpStatusCode StatusOf(HttpMethod method, string path, params (string Name, string Value)[] headers)
    {
        using var response = Send(method, path, null, headers);
        return response.StatusCode;
    }

    /// <summary>A GET of <paramref name="path"/> is refused for want of credentials: 401 with a Bearer challenge.</summary>
    public void AssertAsksForCredentials(string path)
    {
        using var response = _http.GetAsync(path).GetAwaiter().GetResult();
        Assert.True(response.StatusCode == HttpStatusCode.Unauthorized, $"GET {path} without credentials answered {(int)response.StatusCode}");
        Assert.Equal("Bearer", response.Headers.WwwAuthenticate.ToString());
    }

    public void Dispose() => _http.Dispose();
}
