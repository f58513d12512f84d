namespace Diagnostics.Server.Acl;

/// <summary>Which arguments of a command are channels the ACL checks (PUBLISH's first, SUBSCRIBE's all, PSUBSCRIBE's all as patterns).</summary>
public enum AclChannelArguments : byte
{
    None,
    First,
    All,
    AllPatterns,
}
