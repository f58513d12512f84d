using Diagnostics.Server.Api.Access;
using Diagnostics.Server.Diagnostics.Package;
using Diagnostics.Studio.Security;

namespace Diagnostics.Server.Api;

public static class DebugEntryExtensions
{
    /// <summary>Includes this endpoint's response in the debug package as <paramref name="fileName"/>.</summary>
    public static RouteHandlerBuilder IncludeInDebugPackage(this RouteHandlerBuilder builder, string fileName, string query = "") =>
        builder.WithMetadata(new DebugEntryMetadata(fileName, query));

    /// <summary>
    /// Adds every endpoint marked with <see cref="DebugEntryMetadata"/> to the package registry.
    /// The package calls the endpoint's own request delegate with a request made in-process, so the
    /// file holds exactly what the endpoint returns, through the same code path.
    /// </summary>
    public static void RegisterDebugEndpoints(this WebApplication app, DebugPackageRegistry registry)
    {
        foreach (var dataSource in ((IEndpointRouteBuilder)app).DataSources)
        {
            foreach (var endpoint in dataSource.Endpoints)
            {
                if (endpoint is not RouteEndpoint route || endpoint.Metadata.GetMetadata<DebugEntryMetadata>() is not { } debug || endpoint.RequestDelegate is null)
                    continue;
                string path = "/" + (route.RoutePattern.RawText ?? "").TrimStart('/');
                var handler = endpoint.RequestDelegate;
                registry.Add(debug.FileName, (stream, grant, cancellationToken) => InvokeAsync(app.Services, handler, endpoint, path, debug.Query, stream, grant, cancellationToken),
                    RequiredPermissions(endpoint));
            }
        }
    }

    /// <summary>What the endpoint's metadata asks of a login: its group's permissions and its own.</summary>
    public static StudioPermissions RequiredPermissions(Endpoint endpoint)
    {
        var permissions = StudioPermissions.None;
        foreach (var required in endpoint.Metadata.GetOrderedMetadata<RequiredPermissionMetadata>())
            permissions |= required.Permissions;
        return permissions;
    }

    private static async Task InvokeAsync(IServiceProvider services, RequestDelegate handler, Endpoint endpoint, string path, string query,
        Stream body, StudioGrant? grant, CancellationToken cancellationToken)
    {
        await using var scope = services.CreateAsyncScope();
        var context = new DefaultHttpContext { RequestServices = scope.ServiceProvider, RequestAborted = cancellationToken };
        context.Request.Method = HttpMethods.Get;
        context.Request.Scheme = "http";
        context.Request.Host = new HostString("localhost");
        context.Request.Path = path;
        context.Request.QueryString = new QueryString(query.Length == 0 ? "" : "?" + query);
        // Marks the request as coming from the server itself, so the API gate lets it through.
        context.Features.Set(new InProcessRequest());
        // For a login's package, the endpoint answers as it would that login (a view that trims
        // what the login may not see reads this, as on a request the gate admitted).
        if (grant is not null)
            context.Features.Set(grant);
        context.Response.Body = body;
        context.SetEndpoint(endpoint);
        await handler(context).ConfigureAwait(false);
        if (context.Response.StatusCode >= 400)
            throw new InvalidOperationException($"{path} answered HTTP {context.Response.StatusCode}");
    }
}
