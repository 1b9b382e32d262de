package dev.sluice.bench;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code sluice-bench}: Sluice side by side with db-scheduler and the raw SQL floor on one database
 * server. Each workload prints progress every second and ends with one line of figures; see
 * BENCHMARKS.md.
 */
@Command(
    name = "sluice-bench",
    mixinStandardHelpOptions = true,
    description = "Benchmarks Sluice side by side with db-scheduler and the raw SQL floor.",
    subcommands = {
      DrainCommand.class,
      SteadyCommand.class,
      DelayedCommand.class,
      BacklogCommand.class,
      FairnessCommand.class,
      JfrTopCommand.class,
      StepdownCommand.class,
      HandoverCommand.class,
      OrderedCommand.class,
      ExtendCommand.class,
      ClientsCommand.class
    })
public final class BenchMain implements Runnable {

  public static void main(String[] args) {
    System.exit(run(args));
  }

  /** Runs a command line and returns its exit code (for tests). */
  public static int run(String... args) {
    if (System.getProperty("logback.configurationFile") == null) {
      System.setProperty("logback.configurationFile", "bench-logback.xml");
    }
    return new CommandLine(new BenchMain()).execute(args);
  }

  @Override
  public void run() {
    new CommandLine(this).usage(System.out);
  }
}
