using Diagnostics.Studio.Security;

namespace Diagnostics.Server.Api.Access;

public static class RequiredCredentialExtensions
{
    /// <summary>Declares what a request must present to reach these endpoints (a group's rule applies to each of its endpoints).</summary>
    public static TBuilder RequireCredential<TBuilder>(this TBuilder builder, HttpCredential credential) where TBuilder : IEndpointConventionBuilder =>
        builder.WithMetadata(new RequiredCredentialMetadata(credential));

    /// <summary>Declares what the login must be allowed to reach these endpoints, added to what their group already needs.</summary>
    public static TBuilder RequirePermission<TBuilder>(this TBuilder builder, StudioPermissions permissions) where TBuilder : IEndpointConventionBuilder =>
        builder.WithMetadata(new RequiredPermissionMetadata(permissions));

    /// <summary>Declares that these endpoints serve debug packages: they need what every part of a package needs.</summary>
    public static TBuilder ServesPackages<TBuilder>(this TBuilder builder) where TBuilder : IEndpointConventionBuilder =>
        builder.WithMetadata(new RequiredPermissionMetadata(StudioPermissions.None, PackageContents: true));
}
