using Diagnostics.Studio.Security;

namespace Diagnostics.Server.Api.Access;

/// <summary>
/// Endpoint metadata: what a login must be allowed (<see cref="StudioPermissions"/>) to reach the
/// endpoint; a group's and the endpoint's own add up. <paramref name="PackageContents"/>: the
/// endpoint serves debug packages, so it also needs what every part of a package needs.
/// An operator endpoint without any is refused to everyone.
/// </summary>
public sealed record RequiredPermissionMetadata(StudioPermissions Permissions, bool PackageContents = false);
