using System.Net.Http.Headers;
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

    public void Dispose() => _http.Dispose();
}
