package dev.sluice.db;

import static dev.sluice.db.QueueConvention.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Checks a table against the queue convention and names each problem with the statement that fixes
 * it. Pure: it works on what {@link QueueCatalog} read from information_schema.
 */
public final class QueueSchemaValidator {
  private static final List<String> STATE_NAMES =
      List.of("pending", "fired", "acked", "dead", "cancelled");

  private QueueSchemaValidator() {}

  /**
   * @param columns the table's columns by lower-case name
   * @param indexes each index's columns in order, by index name ({@code PRIMARY} for the key)
   * @param engine the storage engine, e.g. InnoDB
   */
  public static List<SchemaProblem> validate(
      String table,
      Map<String, ColumnInfo> columns,
      Map<String, List<String>> indexes,
      String engine) {
    List<SchemaProblem> p = new ArrayList<>();
    String t = "`" + table + "`";
    String nowDefault = "DEFAULT (" + NOW_NS_SQL + ")";

    ColumnInfo id = columns.get(ID);
    if (id == null) {
      p.add(
          new SchemaProblem(
              ID,
              "missing column",
              alterAdd(t, "`id` BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY")));
    } else if (!id.isInteger()) {
      p.add(
          new SchemaProblem(
              ID,
              "must be an integer type, is " + id.columnType(),
              modify(t, "`id` BIGINT NOT NULL AUTO_INCREMENT")));
    } else if (!List.of(ID).equals(indexes.get("PRIMARY"))) {
      p.add(
          new SchemaProblem(
              ID,
              "must be the primary key on its own",
              "ALTER TABLE " + t + " DROP PRIMARY KEY, ADD PRIMARY KEY (`id`)"));
    }

    nsColumn(p, t, columns.get(TIME_NEXT), TIME_NEXT, nowDefault, true);
    nsColumn(p, t, columns.get(TIME_CREATED), TIME_CREATED, nowDefault, true);
    ColumnInfo acked = columns.get(TIME_ACKED);
    if (acked == null) {
      p.add(
          new SchemaProblem(TIME_ACKED, "missing column", alterAdd(t, "`time_acked` BIGINT NULL")));
    } else if (!acked.dataType().equals("bigint")) {
      p.add(
          new SchemaProblem(
              TIME_ACKED,
              "must be BIGINT (ns since epoch), is " + acked.columnType(),
              modify(t, "`time_acked` BIGINT NULL")));
    }

    ColumnInfo state = columns.get(STATE);
    String stateDef = "`state` TINYINT NOT NULL DEFAULT 0";
    if (state == null) {
      p.add(new SchemaProblem(STATE, "missing column", alterAdd(t, stateDef)));
    } else if (state.dataType().equals("enum")) {
      String ct = state.columnType().toLowerCase(Locale.ROOT);
      for (String n : STATE_NAMES) {
        if (!ct.contains("'" + n + "'")) {
          p.add(
              new SchemaProblem(
                  STATE,
                  "ENUM lacks the value '" + n + "'",
                  modify(
                      t,
                      "`state` ENUM('pending','fired','acked','dead','cancelled') NOT NULL DEFAULT 'pending'")));
          break;
        }
      }
      notNullWithDefault(
          p,
          t,
          state,
          "'pending'",
          "`state` ENUM('pending','fired','acked','dead','cancelled') NOT NULL DEFAULT 'pending'");
      if (state.hasDefault() && !"pending".equals(state.defaultUnquoted())) {
        p.add(
            new SchemaProblem(
                STATE,
                "default must be 'pending', is " + state.defaultValue(),
                modify(
                    t,
                    "`state` ENUM('pending','fired','acked','dead','cancelled') NOT NULL DEFAULT 'pending'")));
      }
    } else if (!state.isInteger()) {
      p.add(
          new SchemaProblem(
              STATE, "must be TINYINT or ENUM, is " + state.columnType(), modify(t, stateDef)));
    } else {
      notNullWithDefault(p, t, state, "0", stateDef);
      if (state.hasDefault() && !"0".equals(state.defaultUnquoted())) {
        p.add(
            new SchemaProblem(
                STATE,
                "default must be 0 (pending), is " + state.defaultValue(),
                modify(t, stateDef)));
      }
    }

    intColumn(p, t, columns.get(EPOCH), EPOCH, "`epoch` INT NOT NULL DEFAULT 0");
    intColumn(
        p,
        t,
        columns.get(PRIORITY),
        PRIORITY,
        "`priority` TINYINT NOT NULL DEFAULT " + DEFAULT_PRIORITY);

    ColumnInfo tenant = columns.get(TENANT);
    String tenantDef = "`tenant` VARCHAR(64) NOT NULL DEFAULT ''";
    if (tenant == null) {
      p.add(new SchemaProblem(TENANT, "missing column", alterAdd(t, tenantDef)));
    } else if (!tenant.isText()) {
      p.add(
          new SchemaProblem(
              TENANT, "must be VARCHAR, is " + tenant.columnType(), modify(t, tenantDef)));
    } else {
      notNullWithDefault(p, t, tenant, "''", tenantDef);
    }
    ColumnInfo actor = columns.get(ACTOR);
    if (actor != null && !actor.isText()) {
      p.add(
          new SchemaProblem(
              ACTOR,
              "must be VARCHAR, is " + actor.columnType(),
              modify(t, "`actor` VARCHAR(255) NOT NULL DEFAULT ''")));
    }

    ColumnInfo cls = columns.get(CLASS);
    if (cls != null && !cls.isText()) {
      p.add(
          new SchemaProblem(
              CLASS,
              "must be VARCHAR, is " + cls.columnType(),
              modify(t, "`class` VARCHAR(32) NOT NULL DEFAULT ''")));
    }
    for (Map.Entry<String, ColumnInfo> e : columns.entrySet()) {
      ColumnInfo c = e.getValue();
      if (!SYSTEM_COLUMNS.contains(e.getKey()) && ColumnKind.of(c) == null) {
        p.add(
            new SchemaProblem(
                c.name(),
                "user column `"
                    + c.name()
                    + "` has type "
                    + c.columnType()
                    + ", which Sluice cannot deliver exactly to receivers (spatial and other"
                    + " types without an exact wire kind are refused)",
                "ALTER TABLE "
                    + t
                    + " MODIFY `"
                    + c.name()
                    + "` LONGBLOB -- or keep ST_AsWKB(...) in a BLOB, or drop the column"));
      }
    }
    boolean pollIndex =
        indexes.values().stream()
            .anyMatch(
                cols ->
                    cols.size() >= 2 && cols.get(0).equals(STATE) && cols.get(1).equals(TIME_NEXT));
    if (!pollIndex) {
      p.add(
          new SchemaProblem(
              POLL_INDEX,
              "no index on (state, time_next): the poll query would scan the table",
              "ALTER TABLE " + t + " ADD INDEX `" + POLL_INDEX + "` (`state`, `time_next`)"));
    }
    if (engine != null && !engine.equalsIgnoreCase("InnoDB")) {
      p.add(
          new SchemaProblem(
              "ENGINE",
              "must be InnoDB (transactions and row locks), is " + engine,
              "ALTER TABLE " + t + " ENGINE=InnoDB"));
    }
    return p;
  }

  /**
   * What does not stop a table from being served but is worth fixing, each with the statement that
   * removes the risk:
   *
   * <ul>
   *   <li>a {@code time_next} or {@code time_created} default that reads the clock through the
   *       session's time zone ({@code UNIX_TIMESTAMP(NOW(6))}, the convention's default before it
   *       was made zone-free). Defaults are computed in the application's session, which may use a
   *       zone with daylight saving: in the repeated autumn hour such a default is an hour early,
   *       and the row fires an hour early;
   *   <li>an {@code id} or {@code epoch} declared {@code BIGINT UNSIGNED} may hold values above
   *       2^63 - 1, which no event can carry: such a row is made dead when polled (the rest of the
   *       queue is served).
   * </ul>
   */
  public static List<SchemaProblem> warnings(String table, Map<String, ColumnInfo> columns) {
    List<SchemaProblem> w = new ArrayList<>();
    String t = "`" + table + "`";
    for (String name : List.of(TIME_NEXT, TIME_CREATED)) {
      ColumnInfo c = columns.get(name);
      if (c != null && c.dataType().equals("bigint") && zoneDependent(c.defaultValue())) {
        w.add(
            new SchemaProblem(
                name,
                "default "
                    + c.defaultValue()
                    + " depends on the session's time zone (an hour off in the repeated hour of a"
                    + " daylight saving change)",
                modify(t, "`" + name + "` BIGINT NOT NULL DEFAULT (" + NOW_NS_SQL + ")")));
      }
    }
    for (String name : List.of(ID, EPOCH)) {
      ColumnInfo c = columns.get(name);
      if (c != null
          && c.dataType().equals("bigint")
          && c.columnType().toLowerCase(Locale.ROOT).contains("unsigned")) {
        w.add(
            new SchemaProblem(
                name,
                "is BIGINT UNSIGNED: a row whose "
                    + name
                    + " is above 2^63-1 cannot be carried as an event and is made dead when"
                    + " polled",
                modify(
                    t,
                    name.equals(ID)
                        ? "`id` BIGINT NOT NULL AUTO_INCREMENT"
                        : "`epoch` INT NOT NULL DEFAULT 0")));
      }
    }
    return w;
  }

  /**
   * A table with a {@code dedup_key} column but no UNIQUE index on exactly that column: an insert
   * of a key that a row holds is not refused, so {@code EventProducer.insertUnique} inserts it
   * again (README, "Deduplication").
   *
   * @param uniqueIndexes each UNIQUE index's columns, by index name
   */
  public static List<SchemaProblem> dedupWarnings(
      String table, Map<String, List<String>> uniqueIndexes) {
    if (uniqueIndexes.containsValue(List.of(DEDUP_KEY))) {
      return List.of();
    }
    return List.of(
        new SchemaProblem(
            DEDUP_KEY,
            "has no UNIQUE index of its own, so a second insert of a key is not a duplicate",
            "ALTER TABLE `"
                + table
                + "` ADD UNIQUE KEY `"
                + DEDUP_INDEX
                + "` (`"
                + DEDUP_KEY
                + "`)"));
  }

  /** {@code UNIX_TIMESTAMP(x)} converts x from the session's zone; without argument it does not. */
  static boolean zoneDependent(String dflt) {
    if (dflt == null) {
      return false;
    }
    String d = dflt.toLowerCase(Locale.ROOT).replaceAll("[\\s`]", "");
    return d.contains("unix_timestamp(") && !d.contains("unix_timestamp()");
  }

  private static void nsColumn(
      List<SchemaProblem> p, String t, ColumnInfo c, String name, String dflt, boolean notNull) {
    String def = "`" + name + "` BIGINT NOT NULL " + dflt;
    if (c == null) {
      p.add(new SchemaProblem(name, "missing column", alterAdd(t, def)));
    } else if (!c.dataType().equals("bigint")) {
      p.add(
          new SchemaProblem(
              name, "must be BIGINT (ns since epoch), is " + c.columnType(), modify(t, def)));
    } else if (notNull) {
      notNullWithDefault(p, t, c, "(now in ns)", def);
    }
  }

  private static void intColumn(
      List<SchemaProblem> p, String t, ColumnInfo c, String name, String def) {
    if (c == null) {
      p.add(new SchemaProblem(name, "missing column", alterAdd(t, def)));
    } else if (!c.isInteger()) {
      p.add(
          new SchemaProblem(name, "must be an integer type, is " + c.columnType(), modify(t, def)));
    } else {
      notNullWithDefault(p, t, c, "a default", def);
    }
  }

  private static void notNullWithDefault(
      List<SchemaProblem> p, String t, ColumnInfo c, String what, String def) {
    if (c.nullable()) {
      p.add(
          new SchemaProblem(
              c.name(), "must be NOT NULL (a NULL row would never fire)", modify(t, def)));
    } else if (!c.hasDefault()) {
      p.add(
          new SchemaProblem(
              c.name(),
              "missing default " + what + ": a plain INSERT of user columns would fail",
              modify(t, def)));
    }
  }

  static String alterAdd(String t, String def) {
    return "ALTER TABLE " + t + " ADD COLUMN " + def;
  }

  static String modify(String t, String def) {
    return "ALTER TABLE " + t + " MODIFY " + def;
  }

  /**
   * The problems of an ordered queue's setup, each with its fix ({@link OrderingSchema#validate}).
   */
  public static List<SchemaProblem> validateOrdering(
      String table,
      QueueOptions options,
      Map<String, ColumnInfo> columns,
      Map<String, List<String>> indexes) {
    return OrderingSchema.validate(table, options, columns, indexes);
  }

  /** The index an ordered queue's key checks read, or null ({@link OrderingSchema#index}). */
  public static String orderingIndex(QueueOptions options, Map<String, List<String>> indexes) {
    return OrderingSchema.index(options, indexes);
  }

  /**
   * The problems of a table's event-group columns, each with its fix ({@link
   * GroupSchema#validate}).
   */
  public static List<SchemaProblem> validateGroups(
      String table,
      QueueOptions options,
      Map<String, ColumnInfo> columns,
      Map<String, List<String>> indexes) {
    return GroupSchema.validate(table, options, columns, indexes);
  }
}
