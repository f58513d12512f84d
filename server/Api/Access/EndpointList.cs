using System.Text;
using Diagnostics.Studio.Security;
using Microsoft.AspNetCore.Routing.Patterns;

namespace Diagnostics.Server.Api.Access;

/// <summary>
/// GET /api/endpoints: every route the listener serves, one a line ("GET /api/clients Operator
/// watch clients"), with the credential it declares ("(none declared)": refused to everyone) and,
/// for operator routes, the permissions a login needs ("package" for a route that serves debug
/// packages: what every part needs). What an operator, or a test that must cover routes added
/// later, needs to know what is reachable and how.
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
            lines.Add($"{methods} {Display(route.RoutePattern)} {credential}{Permissions(endpoint)}");
        }
        lines.Sort(StringComparer.Ordinal);
        var text = new StringBuilder();
        foreach (string line in lines)
            text.Append(line).Append('\n');
        return text.ToString();
    }

    private static string Permissions(Endpoint endpoint)
    {
        var declared = endpoint.Metadata.GetOrderedMetadata<RequiredPermissionMetadata>();
        if (declared.Count == 0)
            return "";
        var permissions = StudioPermissions.None;
        bool package = false;
        foreach (var required in declared)
        {
            permissions |= required.Permissions;
            package |= required.PackageContents;
        }
        string names = StudioPermission.Names(permissions);
        return " " + (names.Length == 0 ? "none" : names) + (package ? " package" : "");
    }

    private static string Display(RoutePattern pattern) => "/" + (pattern.RawText ?? "").TrimStart('/');
}
