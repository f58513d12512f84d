using System.Text;

namespace Diagnostics.Server.Tests.Infrastructure;

/// <summary>A decoded reply, RESP2 or RESP3, as the test client read it off the wire.</summary>
public sealed record RespValue(char Kind, string? Text = null, long Integer = 0, double Double = 0, IReadOnlyList<RespValue>? Items = null)
{
    public bool IsNull => Kind == '_' || (Kind is '$' or '*' && Text is null && Items is null);
    public bool IsError => Kind is '-' or '!';
    public bool IsArray => Kind is '*' or '~' or '>' && Items is not null;

    /// <summary>The items of an aggregate reply, failing clearly when it is something else.</summary>
    public IReadOnlyList<RespValue> Array => Items ?? throw new InvalidOperationException($"expected an aggregate reply, got {this}");

    /// <summary>A map reply (RESP3 %) or a flat RESP2 array, as key/value pairs.</summary>
    public Dictionary<string, RespValue> ToMap()
    {
        var map = new Dictionary<string, RespValue>();
        for (int i = 0; i + 1 < Array.Count; i += 2)
            map[Array[i].Text!] = Array[i + 1];
        return map;
    }

    public override string ToString() => Kind switch
    {
        ':' => $":{Integer}",
        ',' => $",{Double}",
        '_' => "(null)",
        _ when Items is not null => $"{Kind}[{string.Join(", ", Items)}]",
        _ when Text is null => $"{Kind}(nil)",
        _ => $"{Kind}{Text}",
    };

    public static string Render(IEnumerable<RespValue> values)
    {
        var text = new StringBuilder();
        foreach (var v in values)
            text.Append(v).Append('\n');
        return text.ToString();
    }
}
