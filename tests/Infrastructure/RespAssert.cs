namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>Assertions on replies that print the whole reply when they fail.</summary>
public static class RespAssert
{
    public static void Ok(RespValue reply) => Simple("OK", reply);

    public static void Simple(string expected, RespValue reply)
    {
        Assert.True(reply.Kind == '+' && reply.Text == expected, $"expected +{expected}, got {reply}");
    }

    public static void Bulk(string expected, RespValue reply)
    {
        Assert.True(reply.Kind is '$' or '=' && reply.Text == expected, $"expected bulk \"{expected}\", got {reply}");
    }

    public static void Integer(long expected, RespValue reply)
    {
        Assert.True(reply.Kind == ':' && reply.Integer == expected, $"expected :{expected}, got {reply}");
    }

    public static void Null(RespValue reply) => Assert.True(reply.IsNull, $"expected a null reply, got {reply}");

    /// <summary>An error reply whose text is exactly <paramref name="expected"/>.</summary>
    public static void Error(string expected, RespValue reply)
    {
        Assert.True(reply.IsError, $"expected error \"{expected}\", got {reply}");
        Assert.Equal(expected, reply.Text);
    }

    /// <summary>An error reply whose text starts with <paramref name="prefix"/>.</summary>
    public static void ErrorStartsWith(string prefix, RespValue reply)
    {
        Assert.True(reply.IsError && reply.Text!.StartsWith(prefix, StringComparison.Ordinal), $"expected error starting \"{prefix}\", got {reply}");
    }

    public static void BulkArray(RespValue reply, params string?[] expected)
    {
        Assert.True(reply.Items is not null, $"expected an array, got {reply}");
        Assert.Equal(expected, reply.Items!.Select(i => i.IsNull ? null : i.Text).ToArray());
    }
}
