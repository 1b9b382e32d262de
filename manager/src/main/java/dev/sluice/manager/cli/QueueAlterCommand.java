package dev.sluice.manager.cli;

import dev.sluice.db.QueueConfigException;
import dev.sluice.db.QueueOptions;
import dev.sluice.manager.config.ManagerConfig;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice queue alter NAME --option k=v}: writes the migration that changes a queue's
 * options. The new comment is the current one, read from the shards, with the given options set or
 * removed; it must parse, or nothing is written (exit 2).
 */
@Command(
    name = "alter",
    mixinStandardHelpOptions = true,
    description = {
      "Write a new versioned Flyway migration V<next>__alter_<name>.sql that changes a queue's"
          + " options (its table comment), merged with the current comment read from the"
          + " database, and print its path. Apply it with: sluice migrate.",
      "Example: sluice queue alter order_events --option ack_wait=2m --unset max_attempts"
    })
final class QueueAlterCommand extends BaseCommand {
  @Parameters(index = "0", paramLabel = "NAME", description = "The queue (table) name.")
  String name;

  @Option(
      names = "--option",
      paramLabel = "KEY=VALUE",
      description = "Set an option. Repeatable. Known: " + QueueOptionsHelp.KNOWN)
  List<String> options = new ArrayList<>();

  @Option(
      names = "--unset",
      paramLabel = "KEY",
      description = "Remove an option from the comment (back to its default). Repeatable.")
  List<String> unset = new ArrayList<>();

  @Option(
      names = "--migrations",
      paramLabel = "DIR",
      description = "The migration directory. Default: the config's migrations.")
  Path migrations;

  @Mixin ConfigOption config;

  @Override
  public Integer call() {
    queueName(name);
    if (options.isEmpty() && unset.isEmpty()) {
      throw CliException.badInput("give at least one --option KEY=VALUE or --unset KEY");
    }
    ManagerConfig cfg = config.load();
    String current;
    try (ShardPools pools = new ShardPools(cfg)) {
      current = currentComment(pools.find(name, null));
    }
    String next = merge(current);
    try {
      QueueOptions.parseComment(name, next);
    } catch (QueueConfigException e) {
      throw CliException.badInput(e.getMessage() + " — nothing written");
    }
    if (next.equals(current.strip())) {
      note("queue " + name + " already has comment '" + current + "'; no migration written");
      if (json) {
        printJson(Map.of("queue", name, "comment", current, "changed", false));
      }
      return CliException.OK;
    }
    MigrationWriter writer =
        new MigrationWriter(migrations != null ? migrations : cfg.migrations());
    String sql =
        "-- Sluice queue "
            + name
            + ": new options, written by `sluice queue alter` at "
            + Instant.now().truncatedTo(ChronoUnit.SECONDS)
            + ".\n-- Was: "
            + current.replace("\n", " ")
            + "\n-- Running managers apply it within their discovery_interval, no restart.\n"
            + "ALTER TABLE `"
            + name
            + "` COMMENT = '"
            + next.replace("'", "''")
            + "';\n";
    Path file = writer.write("alter_" + name, sql);
    if (json) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("queue", name);
      m.put("path", file.toString());
      m.put("comment", next);
      m.put("changed", true);
      printJson(m);
    } else {
      println(file.toString());
    }
    return CliException.OK;
  }

  /** The comment all shards agree on; shards that disagree must be aligned first (exit 1). */
  private String currentComment(List<ShardPools.Found> found) {
    Set<String> comments = new LinkedHashSet<>();
    for (ShardPools.Found f : found) {
      comments.add(f.queue().comment().strip());
    }
    if (comments.size() > 1) {
      StringBuilder sb =
          new StringBuilder("queue " + name + " has different comments on its shards:");
      for (ShardPools.Found f : found) {
        sb.append("\n  ").append(f.shard().name()).append(": ").append(f.queue().comment());
      }
      sb.append("\nalign them first (ALTER TABLE ... COMMENT on each shard)");
      throw CliException.failed(sb.toString());
    }
    return comments.iterator().next();
  }

  /** The current comment's tokens, with {@code --unset} keys removed and {@code --option} set. */
  String merge(String current) {
    Map<String, String> tokens = new LinkedHashMap<>();
    String rest = current.strip().substring(QueueOptions.MARKER.length()).strip();
    if (!rest.isEmpty()) {
      for (String token : rest.split("\\s+")) {
        int eq = token.indexOf('=');
        tokens.put(eq > 0 ? token.substring(0, eq) : token, token);
      }
    }
    for (String key : unset) {
      if (tokens.remove(key.strip()) == null) {
        throw CliException.badInput(
            "--unset " + key + ": the comment '" + current + "' does not set it");
      }
    }
    for (String o : options) {
      String t = o.strip();
      int eq = t.indexOf('=');
      if (eq <= 0 || t.contains(" ")) {
        throw CliException.badInput("--option '" + o + "' must be KEY=VALUE, e.g. ack_wait=30s");
      }
      tokens.put(t.substring(0, eq), t);
    }
    StringBuilder sb = new StringBuilder(QueueOptions.MARKER);
    tokens.values().forEach(t -> sb.append(' ').append(t));
    return sb.toString();
  }
}
