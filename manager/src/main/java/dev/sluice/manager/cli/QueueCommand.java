package dev.sluice.manager.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code sluice queue ...}: create, alter, list, stats, pause and resume queues. */
@Command(
    name = "queue",
    mixinStandardHelpOptions = true,
    description = "Create, change, list, inspect, pause and resume queues.",
    subcommands = {
      QueueCreateCommand.class,
      QueueAlterCommand.class,
      QueueListCommand.class,
      QueueStatsCommand.class,
      QueuePauseCommand.Pause.class,
      QueuePauseCommand.Resume.class
    })
final class QueueCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "give a subcommand: create, alter, list, stats, pause or resume");
  }
}
