namespace Diagnostics.Server.Commands;

/// <summary>Executes one command and writes its reply.</summary>
public delegate void CommandHandler(ref CommandContext context);
