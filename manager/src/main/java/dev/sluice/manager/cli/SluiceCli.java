package dev.sluice.manager.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code sluice} command line. Subcommands are added by {@link #commandLine()}'s callers too.
 */
@Command(
    name = "sluice",
    mixinStandardHelpOptions = true,
    version = "sluice 0.1.0",
    description = "Sluice: a durable, fair, push-based queue manager for MySQL and MariaDB.",
    subcommands = {ServeCommand.class, CommandLine.HelpCommand.class})
public final class SluiceCli implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }

  /** The command line with the manager's own subcommands. */
  public static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new SluiceCli());
    cl.setExecutionExceptionHandler(
        (ex, cmd, parse) -> {
          cmd.getErr().println("sluice " + cmd.getCommandName() + ": " + ex.getMessage());
          return 1;
        });
    return cl;
  }

  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }
}
