namespace Diagnostics.Server.Commands;

/// <summary>Server commands: COMMAND, CONFIG, INFO, TIME, LASTSAVE, SHUTDOWN, DEBUG.</summary>
public static class ServerCommands
{
    public static void Register(CommandTable table)
    {
    }
}
