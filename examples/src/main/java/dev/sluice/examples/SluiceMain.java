package dev.sluice.examples;

import dev.sluice.examples.demo.DemoCommand;
import dev.sluice.manager.cli.SluiceCli;
import org.slf4j.bridge.SLF4JBridgeHandler;
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
    // Libraries that log through java.util.logging (the binlog client) log here too, in the same
    // format, instead of their own two-line records on stderr.
    SLF4JBridgeHandler.removeHandlersForRootLogger();
    SLF4JBridgeHandler.install();
    System.exit(commandLine().execute(args));
  }
}
