package dev.sluice.manager.cli;

import dev.sluice.db.QueueConfigException;
import dev.sluice.db.QueueConvention;
import dev.sluice.db.QueueOptions;
import dev.sluice.manager.config.ManagerConfig;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice queue create NAME}: writes the Flyway migration that creates a queue table — the
 * system columns, their defaults and the poll index ({@link QueueConvention#createTableSql}), the
 * user's columns and the options comment. Bad input writes nothing and exits 2.
 */
@Command(
    name = "create",
    mixinStandardHelpOptions = true,
    description = {
      "Write a new versioned Flyway migration V<next>__create_<name>.sql that creates a queue"
          + " table, and print its path. Apply it with: sluice migrate.",
      "Example: sluice queue create order_events --column \"order_id BIGINT NOT NULL\""
          + " --option ack_wait=1m --option max_attempts=10"
    })
final class QueueCreateCommand extends BaseCommand {
  @Parameters(index = "0", paramLabel = "NAME", description = "The queue (table) name.")
  String name;

  @Option(
      names = "--column",
      paramLabel = "DEFINITION",
      description =
          "A user column, as in CREATE TABLE, e.g. \"order_id BIGINT NOT NULL\". Repeatable."
              + " Every user column travels to the receiver.")
  List<String> columns = new ArrayList<>();

  @Option(
      names = "--shard-key",
      paramLabel = "COLUMN",
      description =
          "The column that routes events to shards. Recorded as a comment in the migration only:"
              + " Sluice does not route by it yet.")
  String shardKey;

  @Option(
      names = "--dedup",
      description =
          "Add the deduplication column dedup_key (VARCHAR(255), exact comparison, NULL allowed)"
              + " and its UNIQUE index sluice_dedup: an insert of a key a row holds is a"
              + " duplicate (EventProducer.insertUnique). The column travels to the receiver.")
  boolean dedup;

  @Option(
      names = "--option",
      paramLabel = "KEY=VALUE",
      description =
          "A queue option for the table comment, e.g. ack_wait=30s. Repeatable. Known: "
              + QueueOptionsHelp.KNOWN)
  List<String> options = new ArrayList<>();

  @Option(
      names = "--migrations",
      paramLabel = "DIR",
      description = "The migration directory. Default: the config's migrations, else db/migration.")
  Path migrations;

  @Mixin ConfigOption config;

  @Override
  public Integer call() {
    String comment = validate();
    MigrationWriter writer = new MigrationWriter(directory());
    String description = "create_" + name;
    Path clash = writer.existing(description);
    if (clash != null) {
      throw CliException.badInput("a migration creating queue " + name + " exists: " + clash);
    }
    StringBuilder sql = new StringBuilder();
    sql.append("-- Sluice queue ")
        .append(name)
        .append(", written by `sluice queue create` at ")
        .append(Instant.now().truncatedTo(ChronoUnit.SECONDS))
        .append(".\n");
    sql.append("-- Insert events with your columns only; Sluice's columns have defaults.\n");
    if (shardKey != null) {
      sql.append("-- shard key: ")
          .append(shardKey)
          .append(" (recorded only: Sluice does not route by it yet)\n");
    }
    if (dedup) {
      sql.append("-- dedup_key: an insert of a key that a row holds is a duplicate (README,")
          .append(" Deduplication).\n");
    }
    sql.append(QueueConvention.createTableSql(name, columns, comment, dedup)).append(";\n");
    Path file = writer.write(description, sql.toString());
    if (json) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("queue", name);
      m.put("path", file.toString());
      m.put("comment", comment);
      printJson(m);
    } else {
      println(file.toString());
    }
    return CliException.OK;
  }

  /** Checks every input; returns the table comment. Nothing is written before this passes. */
  private String validate() {
    queueName(name);
    if (name.toLowerCase(Locale.ROOT).startsWith("sluice_")) {
      throw CliException.badInput(
          "queue name '"
              + name
              + "': names starting with sluice_ are reserved for Sluice's tables");
    }
    Set<String> names = new HashSet<>();
    for (String c : columns) {
      String col = columnName(c);
      if (QueueConvention.SYSTEM_COLUMNS.contains(col) && !col.equals(QueueConvention.ACTOR)) {
        throw CliException.badInput(
            "--column " + col + ": a system column; Sluice adds it with its default itself");
      }
      if (!names.add(col)) {
        throw CliException.badInput("--column " + col + " is given twice");
      }
      if (dedup && col.equals(QueueConvention.DEDUP_KEY)) {
        throw CliException.badInput(
            "--column " + col + ": --dedup adds it (with its UNIQUE index); drop one of them");
      }
    }
    if (shardKey != null && !names.contains(shardKey.toLowerCase(Locale.ROOT))) {
      throw CliException.badInput(
          "--shard-key " + shardKey + " is not one of the --column names " + names);
    }
    StringBuilder comment = new StringBuilder(QueueOptions.MARKER);
    for (String o : options) {
      if (o.isBlank() || o.strip().contains(" ") || !o.contains("=")) {
        throw CliException.badInput("--option '" + o + "' must be KEY=VALUE, e.g. ack_wait=30s");
      }
      comment.append(' ').append(o.strip());
    }
    try {
      QueueOptions.parseComment(name, comment.toString());
    } catch (QueueConfigException e) {
      throw CliException.badInput(e.getMessage());
    }
    return comment.toString();
  }

  /** The column's name from its definition; a definition needs a name and a type. */
  private static String columnName(String definition) {
    String d = definition == null ? "" : definition.strip();
    if (d.contains(";") || d.contains("\n")) {
      throw CliException.badInput(
          "--column '" + definition + "': one column definition, without ';' or line breaks");
    }
    String[] parts = d.split("\\s+", 2);
    String col = parts[0].replace("`", "");
    if (parts.length < 2 || parts[1].isBlank()) {
      throw CliException.badInput(
          "--column '"
              + definition
              + "' needs a name and a type, e.g. \"order_id BIGINT NOT NULL\"");
    }
    try {
      QueueConvention.requireIdentifier("--column name", col);
    } catch (IllegalArgumentException e) {
      throw CliException.badInput(e.getMessage());
    }
    return col.toLowerCase(Locale.ROOT);
  }

  private Path directory() {
    if (migrations != null) {
      return migrations;
    }
    ManagerConfig c = config.loadIfPresent();
    return c == null ? ManagerConfig.DEFAULT_MIGRATIONS : c.migrations();
  }
}
