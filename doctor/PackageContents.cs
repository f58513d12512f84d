using Diagnostics.Contracts;

namespace Diagnostics.Doctor;

/// <summary>Everything read from a debug package, and the managed memory reading it allocated.</summary>
public sealed record PackageContents(PackageManifest Manifest, DoctorInput Input, IReadOnlyList<InFlightWork> InFlight, long AllocatedBytes);
