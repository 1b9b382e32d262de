package dev.sluice.manager.cli;

import dev.sluice.client.QueueColumns;
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
          + " --option ack_wait=1m --option max_attempts=10",
      "Ordered: sluice queue create account_events --ordered --option ordering_on_dead=halt",
      "Event groups: sluice queue create file_chunks --grouped; sluice queue create file_done"
          + " --completes-groups --option group_on_dead=fail_fast"
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
      names = "--grouped",
      description =
          "Its events may be children of event groups: add the column "
              + QueueColumns.GROUP_KEY
              + " (VARCHAR("
              + QueueColumns.GROUP_KEY_MAX_CHARS
              + "), exact comparison, NULL: no group) and its index "
              + QueueColumns.GROUP_INDEX
              + " (group_key) (EventProducer.insertInGroup). The column travels to the"
              + " receiver.")
  boolean grouped;

  @Option(
      names = "--completes-groups",
      description =
          "Its events may complete event groups: add the column "
              + QueueColumns.COMPLETES_GROUP
              + " (VARCHAR("
              + QueueColumns.GROUP_KEY_MAX_CHARS
              + "), exact comparison); an event with a key there is delivered once every child of"
              + " that group is acked, dead or cancelled, with their counts"
              + " (EventProducer.insertGroupCompletion). Not with --ordered.")
  boolean completesGroups;

  @Option(
      names = "--option",
      paramLabel = "KEY=VALUE",
      description =
          "A queue option for the table comment, e.g. ack_wait=30s. Repeatable. Known: "
              + QueueOptionsHelp.KNOWN)
  List<String> options = new ArrayList<>();

  @Option(
      names = "--ordered",
      paramLabel = "key|queue",
      arity = "0..1",
      fallbackValue = QueueOptions.ORDERING_KEY,
      description =
          "Ordered delivery: events sharing a key go one at a time, in id order. key (the"
              + " default) adds the key column `"
              + QueueConvention.ORDERING_KEY
              + " VARCHAR(255) NULL` (a NULL key is not ordered), the index `"
              + QueueConvention.ORDERING_INDEX
              + "` (key, state, id) and ordering=key; queue makes the whole queue one key"
              + " (index on (state, id)).")
  String ordered;

  @Option(
      names = "--ordering-column",
      paramLabel = "COLUMN",
      description =
          "With --ordered: the key column, instead of "
              + QueueConvention.ORDERING_KEY
              + ". Created as VARCHAR(255) NULL unless a --column defines it.")
  String orderingColumn;

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
    if (ordered != null) {
      sql.append(
          ordered.equals(QueueOptions.ORDERING_QUEUE)
              ? "-- Ordered as one key: events go one at a time, in id order.\n"
              : "-- Ordered by "
                  + keyColumn()
                  + ": events sharing its value go one at a time, in id order; a NULL key is"
                  + " not ordered.\n");
    }
    if (dedup) {
      sql.append("-- dedup_key: an insert of a key that a row holds is a duplicate (README,")
          .append(" Deduplication).\n");
    }
    if (grouped) {
      sql.append("-- group_key: the event group its event belongs to, NULL for none (README,")
          .append(" Event groups).\n");
    }
    if (completesGroups) {
      sql.append("-- completes_group: an event with a key there waits for that group's children")
          .append(" and completes it (README, Event groups).\n");
    }
    sql.append(QueueConvention.createTableSql(name, definitions(), comment, dedup)).append(";\n");
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

  /**
   * The user columns, then for an ordered queue its key column (unless a --column defines it) and
   * its index: index definitions may stand among a CREATE TABLE's columns.
   */
  private List<String> definitions() {
    List<String> out = new ArrayList<>(columns);
    if (grouped) {
      out.add(QueueColumns.GROUP_KEY_DEFINITION);
      out.add(QueueColumns.GROUP_INDEX_DEFINITION);
    }
    if (completesGroups) {
      out.add(QueueColumns.COMPLETES_GROUP_DEFINITION);
    }
    if (ordered == null) {
      return out;
    }
    if (ordered.equals(QueueOptions.ORDERING_QUEUE)) {
      out.add("KEY `" + QueueConvention.ORDERING_INDEX + "` (`state`, `id`)");
      return out;
    }
    String col = keyColumn();
    boolean defined =
        columns.stream().anyMatch(c -> columnName(c).equals(col.toLowerCase(Locale.ROOT)));
    if (!defined) {
      out.add("`" + col + "` VARCHAR(255) NULL");
    }
    out.add("KEY `" + QueueConvention.ORDERING_INDEX + "` (`" + col + "`, `state`, `id`)");
    return out;
  }

  private String keyColumn() {
    return orderingColumn == null ? QueueConvention.ORDERING_KEY : orderingColumn;
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
      if (grouped && col.equals(QueueColumns.GROUP_KEY)) {
        throw CliException.badInput(
            "--column " + col + ": --grouped adds it (with its index); drop one of them");
      }
      if (completesGroups && col.equals(QueueColumns.COMPLETES_GROUP)) {
        throw CliException.badInput(
            "--column " + col + ": --completes-groups adds it; drop one of them");
      }
    }
    if (shardKey != null && !names.contains(shardKey.toLowerCase(Locale.ROOT))) {
      throw CliException.badInput(
          "--shard-key " + shardKey + " is not one of the --column names " + names);
    }
    if (completesGroups && ordered != null) {
      throw CliException.badInput(
          "--completes-groups: a queue of completion events cannot be ordered (a completion"
              + " event waits for its group; drop --ordered)");
    }
    StringBuilder comment = new StringBuilder(QueueOptions.MARKER);
    if (ordered != null) {
      if (!ordered.equals(QueueOptions.ORDERING_KEY)
          && !ordered.equals(QueueOptions.ORDERING_QUEUE)) {
        throw CliException.badInput("--ordered must be key or queue, was '" + ordered + "'");
      }
      for (String o : options) {
        if (o.strip().startsWith("ordering=") || o.strip().startsWith("ordering_column=")) {
          throw CliException.badInput(
              "--option " + o.strip() + ": --ordered and --ordering-column set it");
        }
      }
      comment.append(" ordering=").append(ordered);
      if (orderingColumn != null) {
        if (ordered.equals(QueueOptions.ORDERING_QUEUE)) {
          throw CliException.badInput(
              "--ordering-column: a queue ordered as one key (--ordered=queue) has no key column");
        }
        try {
          QueueConvention.requireIdentifier("--ordering-column", orderingColumn);
        } catch (IllegalArgumentException e) {
          throw CliException.badInput(e.getMessage());
        }
        if (QueueConvention.SYSTEM_COLUMNS.contains(orderingColumn.toLowerCase(Locale.ROOT))) {
          throw CliException.badInput(
              "--ordering-column " + orderingColumn + ": a system column; the key is yours");
        }
        // In lower case, as the catalog names columns: the dispatcher looks the key up by this
        // name, and a mixed-case one would find no key (the next event then waits for the
        // 5-minute recheck of held rows).
        orderingColumn = orderingColumn.toLowerCase(Locale.ROOT);
        if (grouped && orderingColumn.equals(QueueColumns.GROUP_KEY)) {
          throw CliException.badInput(
              "--ordering-column "
                  + orderingColumn
                  + ": --grouped adds that column as the group's key; name another column");
        }
        comment.append(" ordering_column=").append(orderingColumn);
      }
    } else if (orderingColumn != null) {
      throw CliException.badInput("--ordering-column needs --ordered");
    }
    for (String o : options) {
      if (o.isBlank() || o.strip().contains(" ") || !o.contains("=")) {
        throw CliException.badInput("--option '" + o + "' must be KEY=VALUE, e.g. ack_wait=30s");
      }
      comment.append(' ').append(o.strip());
    }
    QueueOptions parsed;
    try {
      parsed = QueueOptions.parseComment(name, comment.toString());
    } catch (QueueConfigException e) {
      throw CliException.badInput(e.getMessage());
    }
    if (completesGroups && parsed.ordered()) {
      throw CliException.badInput(
          "--completes-groups: a queue of completion events cannot be ordered (ordering="
              + parsed.ordering()
              + ")");
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
