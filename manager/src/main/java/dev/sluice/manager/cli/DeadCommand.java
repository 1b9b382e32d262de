package dev.sluice.manager.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code sluice dead ...}: list, replay and purge events whose attempts are used up. */
@Command(
    name = "dead",
    mixinStandardHelpOptions = true,
    description = "List, replay or purge dead events (those whose max_attempts are used up).",
    subcommands = {
      DeadListCommand.class,
      DeadChangeCommand.Replay.class,
      DeadChangeCommand.Purge.class
    })
final class DeadCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "give a subcommand: list, replay or purge");
  }
}
