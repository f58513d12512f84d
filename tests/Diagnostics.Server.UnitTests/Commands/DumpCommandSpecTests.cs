using Diagnostics.Server.Commands;
using static Diagnostics.Server.Commands.CommandFlags;

namespace Diagnostics.Server.Tests;

/// <summary>DUMP and RESTORE registered as Redis 7.0.15's COMMAND INFO reports them (the router relies on the key positions).</summary>
public sealed class DumpCommandSpecTests
{
    private static readonly CommandTable Table = new();

    [Theory]
    [InlineData("dump", 2, ReadOnly, "key", "@keyspace @read @slow")]
    [InlineData("restore", -4, Write | DenyOom, "key ttl serialized-value replace absttl seconds frequency", "@keyspace @write @slow @dangerous")]
    public void RegisteredLikeRedis(string name, int arity, CommandFlags flags, string arguments, string categories)
    {
        var spec = Table.Find(name);
        Assert.NotNull(spec);
        Assert.Equal(arity, spec.Arity);
        Assert.Equal(flags, spec.Flags);
        Assert.Equal((1, 1, 1), (spec.FirstKey, spec.LastKey, spec.KeyStep));
        Assert.Equal("generic", spec.Group);
        Assert.Equal("2.6.0", spec.Since);
        Assert.Equal(arguments, string.Join(' ', spec.Arguments.Select(a => a.Name)));
        Assert.Equal(categories, string.Join(' ', CommandMetadata.CategoryList(CommandMetadata.Categories(spec))));
        // RESTORE raises its own events ("restore", or "del" when its TTL had passed).
        Assert.Null(spec.Event);
    }
}
