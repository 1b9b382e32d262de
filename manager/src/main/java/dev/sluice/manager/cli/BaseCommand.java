package dev.sluice.manager.cli;

import dev.sluice.db.QueueConvention;
import dev.sluice.manager.json.Json;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * What every operator command shares: {@code --json}, and the rule that stdout carries the result
 * (a table, a path, JSON) while notes and errors go to stderr, so that scripts can read stdout.
 */
abstract class BaseCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--json", description = "Print the result as JSON on stdout.")
  boolean json;

  /** A queue name as a plain identifier; anything else is bad input (exit 2). */
  static String queueName(String name) {
    try {
      return QueueConvention.requireIdentifier("queue name", name);
    } catch (IllegalArgumentException e) {
      throw CliException.badInput(e.getMessage());
    }
  }

  PrintWriter out() {
    return spec.commandLine().getOut();
  }

  /** A note for the person at the terminal, on stderr. */
  void note(String message) {
    PrintWriter err = spec.commandLine().getErr();
    err.println(message);
    err.flush();
  }

  void printJson(Object value) {
    out().println(Json.write(value));
    out().flush();
  }

  void println(String line) {
    out().println(line);
    out().flush();
  }
}
