package dev.sluice.db;

import dev.sluice.client.QueueColumns;
import java.util.List;
import java.util.Set;

/**
 * The queue-table convention (the README, "The queue table"): the system columns, their defaults,
 * the poll index, and the DDL that creates a conforming table.
 *
 * <p>Times are BIGINT nanoseconds since the Unix epoch on the database server's clock; the defaults
 * are computed by the server so that a plain {@code INSERT} of user columns schedules the event
 * "now" by the shard's own clock.
 */
public final class QueueConvention {
  // The column names are the client's (sluice-client, what producers use): one definition.
  public static final String ID = QueueColumns.ID;
  public static final String TIME_NEXT = QueueColumns.TIME_NEXT;
  public static final String STATE = QueueColumns.STATE;
  public static final String EPOCH = QueueColumns.EPOCH;
  public static final String PRIORITY = QueueColumns.PRIORITY;
  public static final String TENANT = QueueColumns.TENANT;
  public static final String ACTOR = QueueColumns.ACTOR;

  /** Optional work class (e.g. fast, slow): a class's share of a receiver's credits is capped. */
  public static final String CLASS = QueueColumns.CLASS;

  public static final String TIME_CREATED = QueueColumns.TIME_CREATED;
  public static final String TIME_ACKED = QueueColumns.TIME_ACKED;

  /** Columns the manager owns; {@link #ACTOR} is optional. Everything else is user data. */
  public static final Set<String> SYSTEM_COLUMNS = QueueColumns.SYSTEM_COLUMNS;

  /** The server-side "now" in nanoseconds, as a column default or in a statement. */
  public static final String NOW_NS_SQL = QueueColumns.NOW_NS_SQL;

  /** The optional deduplication column (a user column: it travels to receivers). */
  public static final String DEDUP_KEY = QueueColumns.DEDUP_KEY;

  /** The conventional name of the UNIQUE index on {@link #DEDUP_KEY}. */
  public static final String DEDUP_INDEX = QueueColumns.DEDUP_INDEX;

  /** Name of the index the poller's query needs: (state, time_next). */
  public static final String POLL_INDEX = "sluice_poll";

  /** The default key column of an ordered queue ({@code ordering=key}). */
  public static final String ORDERING_KEY = "ordering_key";

  /** The conventional name of the ordered queue's (key, state, id) index. */
  public static final String ORDERING_INDEX = "sluice_ordering";

  /**
   * What an ordered queue adds to the {@code time_next} of a pending event that waits behind an
   * earlier event of its key (held): 2^62 ns, so that held rows lie past every poll's range on the
   * (state, time_next) index and cost no read until their turn. The original time is {@code
   * time_next - HELD_NS}; a {@code time_next} of 2^62 ns (the year 2116) or more reads as held.
   */
  public static final long HELD_NS = 1L << 62;

  /**
   * Name of the index that lets the poller read one tenant's events when another tenant's backlog
   * fills the poll index's range: (state, tenant, time_next). Optional, but without it fairness
   * degrades under a deep backlog.
   */
  public static final String TENANT_INDEX = "sluice_tenant";

  /** The default priority: the middle of TINYINT's range, so both more and less urgent exist. */
  public static final int DEFAULT_PRIORITY = 0;

  private QueueConvention() {}

  /** The system column definitions, in table order. */
  public static List<String> systemColumnDefinitions() {
    return List.of(
        "`id` BIGINT NOT NULL AUTO_INCREMENT",
        "`time_next` BIGINT NOT NULL DEFAULT (" + NOW_NS_SQL + ")",
        "`state` TINYINT NOT NULL DEFAULT 0",
        "`epoch` INT NOT NULL DEFAULT 0",
        "`priority` TINYINT NOT NULL DEFAULT " + DEFAULT_PRIORITY,
        "`tenant` VARCHAR(64) NOT NULL DEFAULT ''",
        "`time_created` BIGINT NOT NULL DEFAULT (" + NOW_NS_SQL + ")",
        "`time_acked` BIGINT NULL");
  }

  /**
   * A CREATE TABLE statement for a queue.
   *
   * @param userColumns column definitions such as {@code order_id BIGINT NOT NULL}
   * @param comment the full table comment, starting with {@code sluice_queue}
   */
  public static String createTableSql(String table, List<String> userColumns, String comment) {
    return createTableSql(table, userColumns, comment, false);
  }

  /**
   * A CREATE TABLE statement for a queue, with the deduplication column {@link #DEDUP_KEY} and its
   * UNIQUE index {@link #DEDUP_INDEX} when {@code dedup} (README, "Deduplication").
   */
  public static String createTableSql(
      String table, List<String> userColumns, String comment, boolean dedup) {
    requireIdentifier("queue name", table);
    if (!QueueOptions.isQueueComment(comment)) {
      throw new IllegalArgumentException(
          "a queue comment must start with sluice_queue: " + comment);
    }
    QueueOptions.parseComment(table, comment);
    StringBuilder sb = new StringBuilder("CREATE TABLE `").append(table).append("` (\n");
    for (String c : systemColumnDefinitions()) {
      sb.append("  ").append(c).append(",\n");
    }
    for (String c : userColumns) {
      sb.append("  ").append(c.strip()).append(",\n");
    }
    if (dedup) {
      sb.append("  ").append(QueueColumns.DEDUP_KEY_DEFINITION).append(",\n");
    }
    sb.append("  PRIMARY KEY (`id`),\n");
    sb.append("  KEY `").append(POLL_INDEX).append("` (`state`, `time_next`),\n");
    sb.append("  KEY `").append(TENANT_INDEX).append("` (`state`, `tenant`, `time_next`)");
    if (dedup) {
      sb.append(",\n  ").append(QueueColumns.DEDUP_INDEX_DEFINITION);
    }
    sb.append("\n");
    sb.append(") ENGINE=InnoDB COMMENT='").append(comment.replace("'", "''")).append("'");
    return sb.toString();
  }

  /** Throws a clear error unless {@code name} is a plain SQL identifier. */
  public static String requireIdentifier(String what, String name) {
    return QueueColumns.requireIdentifier(what, name);
  }
}
