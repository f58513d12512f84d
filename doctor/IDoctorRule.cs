using Diagnostics.Contracts;

namespace Diagnostics.Doctor;

/// <summary>One thing the doctor knows to look for. A rule returns nothing when all is well.</summary>
public interface IDoctorRule
{
    string Id { get; }
    string Area { get; }
    IEnumerable<Finding> Examine(DoctorInput input);
}
