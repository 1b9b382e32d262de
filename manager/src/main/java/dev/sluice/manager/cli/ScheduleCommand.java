package dev.sluice.manager.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code sluice schedule ...}: recurring events (create, list, pause, resume, delete). */
@Command(
    name = "schedule",
    mixinStandardHelpOptions = true,
    description =
        "Recurring events: the shard's leader inserts each occurrence of a schedule (cron or"
            + " interval) into its queue, exactly once.",
    subcommands = {
      ScheduleCreateCommand.class,
      ScheduleListCommand.class,
      ScheduleChangeCommand.Pause.class,
      ScheduleChangeCommand.Resume.class,
      ScheduleChangeCommand.Delete.class
    })
final class ScheduleCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "give a subcommand: create, list, pause, resume or delete");
  }
}
