using System.Text;
using Microsoft.AspNetCore.Routing.Patterns;

namespace Diagnostics.Server.Api.Access;

/// <summary>
/// GET /api/endpoints: every route the listener serves, one a line ("GET /api/info Operator"), with
/// the credential it declares ("(none declared)": refused to everyone). What an operator, or a test
/// that must cover routes added later, needs to know what is reachable and how.
/// </summary>
public static class EndpointList
{
    public static string Describe(EndpointDataSource endpoints)
    {
        var lines = new List<string>();
        foreach (var endpoint in endpoints.Endpoints)
        {
            if (endpoint is not RouteEndpoint route)
                continue;
            string methods = endpoint.Metadata.GetMetadata<IHttpMethodMetadata>()?.HttpMethods is { Count: > 0 } list ? string.Join(',', list) : "*";
            string credential = endpoint.Metadata.GetMetadata<RequiredCredentialMetadata>()?.Credential.ToString() ?? "(none declared)";
            lines.Add($"{methods} {Display(route.RoutePattern)} {credential}");
        }
        lines.Sort(StringComparer.Ordinal);
        var text = new StringBuilder();
        foreach (string line in lines)
            text.Append(line).Append('\n');
        return text.ToString();
    }

    private static string Display(RoutePattern pattern) => "/" + (pattern.RawText ?? "").TrimStart('/');
}
