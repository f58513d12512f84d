using Diagnostics.Server.Tests.Infrastructure;

namespace Diagnostics.Server.Tests;

public sealed class SmokeTests(SharedServer shared) : IClassFixture<SharedServer>
{
    [Fact]
    public void PingAndSetGetRoundTripOverTcp()
    {
        using var client = shared.Connect();
        RespAssert.Simple("PONG", client.Call("PING"));
        RespAssert.Ok(client.Call("SET", "smoke:key", "value"));
        RespAssert.Bulk("value", client.Call("GET", "smoke:key"));
    }
}
