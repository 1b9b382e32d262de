package dev.sluice.db;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.Record;

/**
 * Finds queue tables in a shard's schema by their comment, and reads what validation needs from
 * information_schema.
 */
public final class QueueCatalog {
  private final DSLContext ctx;

  public QueueCatalog(DataSource dataSource) {
    this.ctx = Jooq.context(dataSource);
  }

  /** A table whose comment marks it a queue. */
  public record Candidate(String table, String comment) {}

  /**
   * What discovery found for one table: a served queue, or the reason it is not served.
   *
   * @param unreadable the table could not be read this time (a database error, not its content):
   *     whoever serves it should keep what it had and look again at the next discovery
   */
  public record Discovered(
      String table, String comment, QueueTable queue, String problem, boolean unreadable) {
    Discovered(String table, String comment, QueueTable queue, String problem) {
      this(table, comment, queue, problem, false);
    }

    public boolean valid() {
      return queue != null;
    }
  }

  /** Tables of the current schema whose comment starts with {@code sluice_queue}. */
  public List<Candidate> candidates() {
    List<Candidate> out = new ArrayList<>();
    for (Record r :
        ctx.fetch(
            "SELECT TABLE_NAME, TABLE_COMMENT FROM information_schema.TABLES"
                + " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE'"
                + " AND TABLE_COMMENT LIKE 'sluice\\_queue%' ORDER BY TABLE_NAME")) {
      String comment = r.get(1, String.class);
      if (QueueOptions.isQueueComment(comment)) {
        out.add(new Candidate(r.get(0, String.class), comment));
      }
    }
    return out;
  }

  /**
   * Discovers and validates every queue table. Never throws for one bad table: whatever fails for
   * one table (its comment, its schema) makes that table's {@link Discovered} invalid with the
   * reason; a failed read of the tables' columns, indexes and engines makes each of them unreadable
   * this time; only failing to list the tables at all throws.
   *
   * <p>Four statements however many queue tables there are (the list, then the columns, the indexes
   * and the engines of all of them): a discovery runs every few seconds on every shard, and reading
   * each table's schema on its own cost an idle manager 0.6 queries/s per queue.
   */
  public List<Discovered> discover() {
    List<Candidate> candidates = candidates();
    if (candidates.isEmpty()) {
      return List.of();
    }
    List<String> names = candidates.stream().map(Candidate::table).toList();
    Map<String, Map<String, ColumnInfo>> columns;
    Map<String, Map<String, List<String>>> indexes;
    Map<String, String> engines;
    try {
      columns = columns(names);
      indexes = indexes(names);
      engines = engines(names);
    } catch (org.jooq.exception.DataAccessException e) {
      List<Discovered> out = new ArrayList<>();
      for (Candidate c : candidates) {
        out.add(
            new Discovered(
                c.table(),
                c.comment(),
                null,
                "queue " + c.table() + ": cannot be read: " + e,
                true));
      }
      return out;
    }
    List<Discovered> out = new ArrayList<>();
    for (Candidate c : candidates) {
      String t = c.table();
      out.add(
          inspect(
              c,
              () ->
                  validate(
                      c,
                      columns.getOrDefault(t, Map.of()),
                      indexes.getOrDefault(t, Map.of()),
                      engines.get(t))));
    }
    return out;
  }

  /**
   * Validates one candidate: options from its comment, then its columns and indexes (read for it
   * alone). Never throws: any failure is the table's problem, naming it.
   */
  public Discovered inspect(Candidate c) {
    return inspect(c, () -> validate(c, columns(c.table()), indexes(c.table()), engine(c.table())));
  }

  private static Discovered inspect(Candidate c, java.util.function.Supplier<Discovered> check) {
    try {
      return check.get();
    } catch (QueueConfigException e) {
      return new Discovered(c.table(), c.comment(), null, e.getMessage());
    } catch (org.jooq.exception.DataAccessException e) {
      return new Discovered(
          c.table(), c.comment(), null, "queue " + c.table() + ": cannot be read: " + e, true);
    } catch (Throwable e) { // NOPMD: one table's failure, whatever it is, stays that table's
      if (e instanceof VirtualMachineError v && !(v instanceof StackOverflowError)) {
        throw v;
      }
      return new Discovered(
          c.table(), c.comment(), null, "queue " + c.table() + ": cannot be read: " + e);
    }
  }

  private static Discovered validate(
      Candidate c,
      Map<String, ColumnInfo> columns,
      Map<String, List<String>> indexes,
      String engine) {
    QueueOptions options = QueueOptions.parseComment(c.table(), c.comment());
    List<SchemaProblem> problems =
        new ArrayList<>(QueueSchemaValidator.validate(c.table(), columns, indexes, engine));
    problems.addAll(QueueSchemaValidator.validateOrdering(c.table(), options, columns, indexes));
    problems.addAll(QueueSchemaValidator.validateGroups(c.table(), options, columns, indexes));
    if (!problems.isEmpty()) {
      List<String> texts = problems.stream().map(SchemaProblem::toString).toList();
      return new Discovered(
          c.table(),
          c.comment(),
          null,
          "queue "
              + c.table()
              + ": table does not follow the convention: "
              + String.join("; ", texts));
    }
    List<String> user = new ArrayList<>();
    for (String name : columns.keySet()) {
      if (!QueueConvention.SYSTEM_COLUMNS.contains(name)) {
        user.add(name);
      }
    }
    boolean enumState = columns.get(QueueConvention.STATE).dataType().equals("enum");
    QueueTable q =
        new QueueTable(
            c.table(),
            options,
            enumState,
            List.copyOf(user),
            columns.containsKey(QueueConvention.ACTOR),
            columns.containsKey(QueueConvention.CLASS),
            index(
                indexes,
                QueueConvention.POLL_INDEX,
                QueueConvention.STATE,
                QueueConvention.TIME_NEXT),
            index(
                indexes,
                QueueConvention.TENANT_INDEX,
                QueueConvention.STATE,
                QueueConvention.TENANT,
                QueueConvention.TIME_NEXT),
            Map.copyOf(columns),
            QueueSchemaValidator.orderingIndex(options, indexes));
    return new Discovered(c.table(), c.comment(), q, null);
  }

  /**
   * The name of an index that starts with {@code prefix}: the conventional name when that index has
   * this shape, else the first such index by name; null when there is none. The poll queries name
   * the index they read (FORCE INDEX): MySQL 8 may otherwise prefer another one.
   */
  static String index(Map<String, List<String>> indexes, String conventional, String... prefix) {
    List<String> want = List.of(prefix);
    List<String> named = indexes.get(conventional);
    if (named != null
        && named.size() >= want.size()
        && named.subList(0, want.size()).equals(want)) {
      return conventional;
    }
    for (Map.Entry<String, List<String>> e : indexes.entrySet()) {
      List<String> cols = e.getValue();
      if (cols.size() >= want.size() && cols.subList(0, want.size()).equals(want)) {
        return e.getKey();
      }
    }
    return null;
  }

  /** Problems of one table, for the CLI's {@code check}. */
  public List<SchemaProblem> problems(String table) {
    return QueueSchemaValidator.validate(table, columns(table), indexes(table), engine(table));
  }

  /**
   * Warnings of one table, for the CLI's {@code check}: see {@link QueueSchemaValidator#warnings}.
   */
  public List<SchemaProblem> warnings(String table) {
    Map<String, ColumnInfo> columns = columns(table);
    List<SchemaProblem> w = new ArrayList<>(QueueSchemaValidator.warnings(table, columns));
    if (columns.containsKey(QueueConvention.DEDUP_KEY)) {
      w.addAll(QueueSchemaValidator.dedupWarnings(table, uniqueIndexes(table)));
    }
    return w;
  }

  /** Each UNIQUE index's columns in order (the primary key too), keyed by index name. */
  public Map<String, List<String>> uniqueIndexes(String table) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (Record r :
        ctx.fetch(
            "SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS"
                + " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND NON_UNIQUE = 0"
                + " ORDER BY INDEX_NAME, SEQ_IN_INDEX",
            table)) {
      String column = r.get(1, String.class);
      out.computeIfAbsent(r.get(0, String.class), k -> new ArrayList<>())
          .add(column == null ? "" : column.toLowerCase(Locale.ROOT));
    }
    return out;
  }

  /** The table's columns in order, keyed by lower-case name. */
  public Map<String, ColumnInfo> columns(String table) {
    return columns(List.of(table)).getOrDefault(table, new LinkedHashMap<>());
  }

  /** Each table's columns in order, keyed by lower-case name: one statement for all. */
  Map<String, Map<String, ColumnInfo>> columns(List<String> tables) {
    Map<String, Map<String, ColumnInfo>> all = new LinkedHashMap<>();
    for (Record r :
        ctx.fetch(
            "SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT,"
                + " EXTRA FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()"
                + " AND TABLE_NAME IN ("
                + marks(tables.size())
                + ") ORDER BY TABLE_NAME, ORDINAL_POSITION",
            tables.toArray())) {
      Map<String, ColumnInfo> out =
          all.computeIfAbsent(r.get(0, String.class), k -> new LinkedHashMap<>());
      String name = r.get(1, String.class).toLowerCase(Locale.ROOT);
      String extra = r.get(6, String.class);
      boolean autoInc = extra != null && extra.toLowerCase(Locale.ROOT).contains("auto_increment");
      String dflt = r.get(5, String.class);
      boolean nullable = "YES".equalsIgnoreCase(r.get(4, String.class));
      // MariaDB shows the string NULL for "DEFAULT NULL"; a NOT NULL column cannot have it.
      if (dflt != null && dflt.equalsIgnoreCase("NULL") && !nullable) {
        dflt = null;
      }
      out.put(
          name,
          new ColumnInfo(
              name,
              r.get(2, String.class).toLowerCase(Locale.ROOT),
              r.get(3, String.class),
              nullable,
              autoInc && dflt == null ? "auto_increment" : dflt,
              autoInc));
    }
    return all;
  }

  private static String marks(int n) {
    return String.join(", ", java.util.Collections.nCopies(n, "?"));
  }

  /** Each index's columns in order, keyed by index name. */
  public Map<String, List<String>> indexes(String table) {
    return indexes(List.of(table)).getOrDefault(table, new LinkedHashMap<>());
  }

  /** Each table's indexes, each with its columns in order: one statement for all. */
  Map<String, Map<String, List<String>>> indexes(List<String> tables) {
    Map<String, Map<String, List<String>>> all = new LinkedHashMap<>();
    for (Record r :
        ctx.fetch(
            "SELECT TABLE_NAME, INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS"
                + " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ("
                + marks(tables.size())
                + ") ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX",
            tables.toArray())) {
      // MySQL 8 lists a functional key part (an expression) with no column name.
      String column = r.get(2, String.class);
      all.computeIfAbsent(r.get(0, String.class), k -> new LinkedHashMap<>())
          .computeIfAbsent(r.get(1, String.class), k -> new ArrayList<>())
          .add(column == null ? "" : column.toLowerCase(Locale.ROOT));
    }
    return all;
  }

  /** Each table's storage engine: one statement for all. */
  private Map<String, String> engines(List<String> tables) {
    Map<String, String> out = new LinkedHashMap<>();
    for (Record r :
        ctx.fetch(
            "SELECT TABLE_NAME, ENGINE FROM information_schema.TABLES"
                + " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ("
                + marks(tables.size())
                + ")",
            tables.toArray())) {
      out.put(r.get(0, String.class), r.get(1, String.class));
    }
    return out;
  }

  private String engine(String table) {
    return engines(List.of(table)).get(table);
  }
}
