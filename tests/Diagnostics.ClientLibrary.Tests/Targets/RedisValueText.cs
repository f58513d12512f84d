using StackExchange.Redis;

namespace Diagnostics.ClientLibrary.Tests.Targets;

/// <summary>Replies as plain strings, so a test compares them with the literal it expects.</summary>
public static class RedisValueText
{
    public static string[] Texts(this RedisValue[] values) => Array.ConvertAll(values, v => v.IsNull ? "(nil)" : (string)v!);
}
