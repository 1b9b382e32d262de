package dev.sluice.examples;

import dev.sluice.examples.demo.DemoCommand;
import dev.sluice.manager.cli.SluiceCli;
import picocli.CommandLine;

/**
 * Entry point of the runnable jar behind {@code ./sluice}: the manager's command line plus the
 * commands that live here, so one jar serves both {@code sluice serve} and {@code sluice demo}.
 */
public final class SluiceMain {
  private SluiceMain() {}

  /** The full command line; tests execute it in-process. */
  public static CommandLine commandLine() {
    CommandLine cl = SluiceCli.commandLine();
    cl.addSubcommand("demo", new DemoCommand());
    return cl;
  }

  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }
}
