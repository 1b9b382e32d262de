package dev.sluice.client;

import java.util.Set;
import java.util.regex.Pattern;

/**
 * What a producer needs of the queue-table convention (the README, "The queue table"): the names of
 * the system columns, the identifier rule, and the database's "now" in nanoseconds. The manager's
 * side of the convention ({@code dev.sluice.db.QueueConvention}, in sluice-db) takes its names from
 * here.
 */
public final class QueueColumns {
  public static final String ID = "id";
  public static final String TIME_NEXT = "time_next";
  public static final String STATE = "state";
  public static final String EPOCH = "epoch";
  public static final String PRIORITY = "priority";
  public static final String TENANT = "tenant";
  public static final String ACTOR = "actor";
  public static final String CLASS = "class";
  public static final String TIME_CREATED = "time_created";
  public static final String TIME_ACKED = "time_acked";

  /**
   * The optional deduplication column (README, "Deduplication"): a user column, so it is not in
   * {@link #SYSTEM_COLUMNS} and travels to receivers; a UNIQUE index on it ({@link #DEDUP_INDEX})
   * makes a second insert of the same key a duplicate.
   */
  public static final String DEDUP_KEY = "dedup_key";

  /** The conventional name of the UNIQUE index on {@link #DEDUP_KEY}. */
  public static final String DEDUP_INDEX = "sluice_dedup";

  /** The longest key, in characters: the column is a {@code VARCHAR(255)}. */
  public static final int DEDUP_KEY_MAX_CHARS = 255;

  /**
   * The column's definition: binary collation, so keys compare exactly (not case- or
   * accent-insensitively, as the tables' default collations would).
   */
  public static final String DEDUP_KEY_DEFINITION =
      "`dedup_key` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL";

  /** The index's definition, as in a CREATE TABLE. */
  public static final String DEDUP_INDEX_DEFINITION = "UNIQUE KEY `sluice_dedup` (`dedup_key`)";

  /**
   * The optional column of a group's children (README, "Event groups"): the group's key. A user
   * column, so it travels to receivers; the index {@link #GROUP_INDEX} on it serves the manager's
   * check that a group has no pending child left.
   */
  public static final String GROUP_KEY = "group_key";

  /**
   * The optional column that counts an event's snoozes ({@code INT NOT NULL DEFAULT 0}): its
   * attempts are {@code epoch - snoozes}.
   */
  public static final String SNOOZES = "snoozes";

  /** The definition of {@link #SNOOZES} for a migration. */
  public static final String SNOOZES_DEFINITION = "`snoozes` INT NOT NULL DEFAULT 0";

  /**
   * The conventional name of the {@code group_key} index. Without {@code state} in it, a child's
   * fire and ack leave it alone; one on ({@code group_key}, {@code state}), which earlier versions
   * created, still serves.
   */
  public static final String GROUP_INDEX = "sluice_group";

  /**
   * The optional column of a completion event: the key of the group it completes. A row with a
   * value there waits for its group instead of for its time.
   */
  public static final String COMPLETES_GROUP = "completes_group";

  /** The longest group key, in characters. */
  public static final int GROUP_KEY_MAX_CHARS = 191;

  /** The child column's definition: binary collation, as {@code sluice_group.group_key}. */
  public static final String GROUP_KEY_DEFINITION =
      "`group_key` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL";

  /** The child index's definition, as in a CREATE TABLE. */
  public static final String GROUP_INDEX_DEFINITION = "KEY `sluice_group` (`group_key`)";

  /** The completion column's definition. */
  public static final String COMPLETES_GROUP_DEFINITION =
      "`completes_group` VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL";

  /** Columns the manager owns; {@link #ACTOR} is optional. Everything else is user data. */
  public static final Set<String> SYSTEM_COLUMNS =
      Set.of(ID, TIME_NEXT, STATE, EPOCH, PRIORITY, TENANT, ACTOR, CLASS, TIME_CREATED, TIME_ACKED);

  /**
   * The server-side "now" in nanoseconds since the epoch, as a column default or in a statement.
   * Zone-free: it counts from the epoch in UTC, so it is the same instant whatever the session's
   * {@code time_zone} (which the application's connections, where column defaults are computed, may
   * set to a zone with daylight saving: {@code UNIX_TIMESTAMP(NOW(6))} reads the repeated autumn
   * hour an hour early). Works on MySQL 8 and MariaDB, as a default too.
   */
  public static final String NOW_NS_SQL =
      "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000)";

  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,63}");

  private QueueColumns() {}

  /** Throws a clear error unless {@code name} is a plain SQL identifier. */
  public static String requireIdentifier(String what, String name) {
    if (name == null || !IDENTIFIER.matcher(name).matches()) {
      throw new IllegalArgumentException(
          what
              + " must be 1-64 letters, digits or underscores, not starting with a digit: '"
              + name
              + "'");
    }
    return name;
  }
}
