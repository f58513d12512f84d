using Diagnostics.Contracts;
using Diagnostics.Server.Network;

namespace Diagnostics.Server.Diagnostics.Views;

/// <summary>The client table: CLIENT LIST's figures as contract records, with what each client runs now.</summary>
public static class ClientView
{
    public static ClientSnapshot[] Build(DataServer server)
    {
        // What runs now, by client: one pass over the thread slots instead of one per client.
        var running = new Dictionary<long, InFlightWork>();
        foreach (var work in InFlightView.Build())
            if (work.ClientId != 0)
                running.TryAdd(work.ClientId, work);

        long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        var clients = server.Clients.Snapshot();
        var result = new ClientSnapshot[clients.Count];
        for (int i = 0; i < clients.Count; i++)
        {
            var client = clients[i];
            // Read once: it moves while the kernel takes bytes, and tot-mem must agree with omem.
            long omem = client.UnsentBytes;
            result[i] = new ClientSnapshot
            {
                Id = client.Id,
                Address = client.Address,
                LocalAddress = client.LocalAddress,
                FileDescriptor = client.FileDescriptor,
                Name = client.Name ?? "",
                AgeSeconds = (now - client.CreatedMs) / 1000,
                IdleSeconds = (now - client.LastInteractionMs) / 1000,
                Flags = ClientDescription.Flags(client),
                Database = client.DatabaseIndex,
                QueryBufferBytes = client.QueryBufferBytes,
                QueryBufferFreeBytes = client.QueryBufferFreeBytes,
                ArgvMemoryBytes = client.ArgvBytes,
                OutputBufferBytes = client.Reply.OpenBlockBytes,
                OutputListLength = client.OutputBlocks,
                OutputMemoryBytes = omem,
                TotalMemoryBytes = client.ArenaCapacity + client.QueryBufferBytes + omem,
                PendingPushBytes = client.PendingPushBytes,
                OutputStalledSeconds = client.OutputStalledSeconds,
                TooBusyRefusals = client.TooBusyRefusals,
                Class = client.Class.ToString().ToLowerInvariant(),
                Events = omem > 0 ? "rw" : "r",
                LastCommand = client.LastCommand?.FullName ?? "NULL",
                Protocol = client.Reply.Protocol,
                LibraryName = client.LibName ?? "",
                LibraryVersion = client.LibVersion ?? "",
                NetInputBytes = client.NetInputBytes,
                NetOutputBytes = client.NetOutputBytes,
                CommandsProcessed = client.CommandsProcessed,
                Running = running.GetValueOrDefault(client.Id),
            };
        }
        return result;
    }
}
