package dev.sluice.manager.cli;

import dev.sluice.db.QueueConfigException;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code sluice} command line. Subcommands are added by {@link #commandLine()}'s callers too
 * (the runnable jar adds {@code demo}).
 *
 * <p>Exit codes, for scripts: 0 ok; 1 the operation failed (a database error, a shard that failed,
 * some ids not changed); 2 usage or bad input, in which case nothing was changed or written.
 */
@Command(
    name = "sluice",
    mixinStandardHelpOptions = true,
    version = "sluice 0.1.0",
    description = "Sluice: a durable, fair, push-based queue manager for MySQL and MariaDB.",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:ok",
      "1:the operation failed (database error, a shard failed, some ids were not changed)",
      "2:usage or bad input; nothing was changed or written"
    },
    subcommands = {
      ServeCommand.class,
      QueueCommand.class,
      DeadCommand.class,
      OrderingCommand.class,
      GroupCommand.class,
      CancelCommand.class,
      ScheduleCommand.class,
      MigrateCommand.class,
      CheckCommand.class,
      CommandLine.HelpCommand.class
    })
public final class SluiceCli implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** Without a subcommand: the usage, on stderr, and exit 2. */
  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return CliException.BAD_INPUT;
  }

  /** The command line with the manager's own subcommands and the exit-code rules. */
  public static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new SluiceCli());
    cl.setExecutionExceptionHandler(
        (ex, cmd, parse) -> {
          int code;
          if (ex instanceof CliException c) {
            code = c.exitCode();
          } else if (ex instanceof IllegalArgumentException || ex instanceof QueueConfigException) {
            code = CliException.BAD_INPUT;
          } else {
            code = CliException.FAILED;
          }
          String message = ex.getMessage() == null ? ex.toString() : ex.getMessage();
          cmd.getErr().println(cmd.getCommandSpec().qualifiedName() + ": " + message);
          cmd.getErr().flush();
          return code;
        });
    return cl;
  }

  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }
}
