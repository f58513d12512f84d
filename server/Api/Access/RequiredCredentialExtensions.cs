namespace Diagnostics.Server.Api.Access;

public static class RequiredCredentialExtensions
{
    /// <summary>Declares what a request must present to reach these endpoints (a group's rule applies to each of its endpoints).</summary>
    public static TBuilder RequireCredential<TBuilder>(this TBuilder builder, HttpCredential credential) where TBuilder : IEndpointConventionBuilder =>
        builder.WithMetadata(new RequiredCredentialMetadata(credential));
}
