package dev.sluice.manager.cli;

import dev.sluice.client.QueueColumns;
import dev.sluice.db.store.Stores;
import java.sql.SQLException;
import javax.sql.DataSource;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code sluice group ...}: event groups (README, "Event groups"): one group, the open ones. */
@Command(
    name = "group",
    mixinStandardHelpOptions = true,
    description =
        "Event groups: children (group_key) whose completion event (completes_group) is"
            + " delivered once none of them is pending or fired. Show one group, or list the"
            + " groups sealed and waiting for their children.",
    subcommands = {GroupShowCommand.class, GroupListCommand.class})
final class GroupCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "give a subcommand: show or list");
  }

  /** A group key as the producer takes it (1 to 191 characters); anything else is bad input. */
  static String groupKey(String key) {
    int chars = key == null ? 0 : key.codePointCount(0, key.length());
    if (chars == 0 || chars > QueueColumns.GROUP_KEY_MAX_CHARS) {
      throw CliException.badInput(
          "a group key must be 1 to "
              + QueueColumns.GROUP_KEY_MAX_CHARS
              + " characters, was "
              + chars);
    }
    return key;
  }

  /** The shard's "now" by the database clock (sealed_ns is), in ns since the epoch. */
  static long nowNs(DataSource ds) {
    try {
      return Stores.over(ds).groups().nowNs();
    } catch (RuntimeException e) {
      Throwable why = e.getCause() instanceof SQLException ? e.getCause() : e;
      throw CliException.failed("reading the database clock failed: " + why.getMessage());
    }
  }

  /** How long ago {@code ns} was, at {@code nowNs}: "3m20s". */
  static String age(long ns, long nowNs) {
    return QueueStatsCommand.age(Math.max(1, (nowNs - ns) / 1_000_000));
  }
}
