package dev.sluice.manager.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code sluice ordering ...}: an ordered queue's keys halted at a dead event ({@code
 * ordering_on_dead=halt}), and skipping their dead events.
 */
@Command(
    name = "ordering",
    mixinStandardHelpOptions = true,
    description =
        "An ordered queue's keys halted at a dead event (ordering_on_dead=halt): list them, or"
            + " skip the dead event so the key goes on. To retry the dead event instead: sluice"
            + " dead replay.",
    subcommands = {OrderingHaltedCommand.class, OrderingSkipCommand.class})
final class OrderingCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "give a subcommand: halted or skip");
  }
}
