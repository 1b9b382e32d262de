package dev.sluice.client;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Adds events to a queue through the caller's own JDBC {@link Connection}, so the event commits or
 * rolls back with the caller's transaction. A plain {@code INSERT} of the user columns works just
 * as well; this helper adds scheduling, tenant and priority.
 *
 * <pre>{@code
 * try (Connection c = dataSource.getConnection()) {
 *   c.setAutoCommit(false);
 *   insertOrder(c, order);
 *   EventProducer.insert(c, "order_events", Map.of("order_id", order.id()),
 *       EventOptions.builder().delay(Duration.ofSeconds(5)).tenant("acme").build());
 *   c.commit();
 * }
 * }</pre>
 */
public final class EventProducer {
  private EventProducer() {}

  /** Inserts an event due now with default tenant and priority; returns its id. */
  public static long insert(Connection c, String queue, Map<String, ?> columns)
      throws SQLException {
    return insert(c, queue, columns, EventOptions.DEFAULTS);
  }

  /**
   * Inserts an event; returns its id.
   *
   * @param columns user columns by name; system columns may not appear here
   * @throws IllegalArgumentException for a bad queue or column name (nothing is written)
   */
  public static long insert(
      Connection c, String queue, Map<String, ?> columns, EventOptions options)
      throws SQLException {
    return execute(c, queue, statement(c, queue, columns, options), options);
  }

  /** {@link #insertUnique(Connection, String, String, Map, EventOptions)} with default options. */
  public static InsertOutcome insertUnique(
      Connection c, String queue, String dedupKey, Map<String, ?> columns) throws SQLException {
    return insertUnique(c, queue, dedupKey, columns, EventOptions.DEFAULTS);
  }

  /**
   * Inserts an event whose {@code dedup_key} column holds {@code dedupKey}, unless a row of the
   * queue holds that key already: then nothing is inserted and that row's id is returned, marked
   * {@link InsertOutcome#duplicate() duplicate}. The queue needs the {@code dedup_key} column and
   * its UNIQUE index (README, "Deduplication"); a key stays taken while its row exists.
   *
   * <p>The statement is a plain INSERT; on the duplicate-key error (1062), which on MySQL and
   * MariaDB undoes that statement only, not the caller's transaction, the existing row's id is read
   * by its key: a plain read, and when the transaction's snapshot is too old to see the row, a
   * locking read ({@code LOCK IN SHARE MODE}), which sees the latest committed row. The shared lock
   * the failed INSERT took on the key keeps the row from being purged until the caller's
   * transaction ends. An insert of a key that another transaction has inserted and not yet
   * committed waits for it: a duplicate if it commits, inserted if it rolls back. Every other error
   * is thrown as it is (a duplicate primary key too); the caller's transaction is untouched by this
   * method.
   *
   * @param dedupKey 1 to 255 characters, compared exactly; route the event to the shard the key
   *     belongs to (a key is unique per shard)
   * @param columns user columns by name; may hold {@code dedup_key} only with the same value
   * @throws IllegalArgumentException for a bad key, queue or column name (nothing is written)
   */
  public static InsertOutcome insertUnique(
      Connection c, String queue, String dedupKey, Map<String, ?> columns, EventOptions options)
      throws SQLException {
    Map<String, Object> withKey = withDedupKey(queue, dedupKey, columns);
    Insert insert = statement(c, queue, withKey, options);
    for (int attempt = 1; ; attempt++) {
      try {
        return new InsertOutcome(execute(c, queue, insert, options), false);
      } catch (SQLException e) {
        noDedupColumn(queue, e);
        if (e.getErrorCode() != ER_DUP_ENTRY) {
          throw e;
        }
        Long existing = existingId(c, queue, dedupKey);
        if (existing != null) {
          return new InsertOutcome(existing, true);
        }
        // No row holds the key: the duplicate was of another key (the primary key, say), which
        // is the caller's error; or, in auto-commit only, the holder was purged in between.
        if (!c.getAutoCommit() || attempt >= 3) {
          throw e;
        }
      }
    }
  }

  /**
   * {@link #insertDebounced(Connection, String, String, Map, EventOptions)} with default options.
   */
  public static DebounceOutcome insertDebounced(
      Connection c, String queue, String dedupKey, Map<String, ?> columns) throws SQLException {
    return insertDebounced(c, queue, dedupKey, columns, EventOptions.DEFAULTS);
  }

  /**
   * Debounces the event of {@code dedupKey}: while the row holding the key is still pending, a new
   * call replaces the columns it gives and the due time (now, or {@code options}' delay or fireAt;
   * its tenant and priority if given) of that same event; with no row holding the key, inserts a
   * new event; once the row is fired (or acked, dead, cancelled), writes nothing and returns {@link
   * DebounceOutcome.Result#NOT_PENDING}, as {@link #insertUnique} does for a duplicate. The
   * statements and their locks: {@link DebouncedInsert}.
   *
   * @param dedupKey 1 to 255 characters, compared exactly
   * @param columns user columns by name (those not given keep their values on a replace); may hold
   *     {@code dedup_key} only with the same value
   * @param options as with insert, but with no id
   * @throws IllegalArgumentException for a bad key, queue or column name, or an id in {@code
   *     options} (nothing is written)
   */
  public static DebounceOutcome insertDebounced(
      Connection c, String queue, String dedupKey, Map<String, ?> columns, EventOptions options)
      throws SQLException {
    return DebouncedInsert.run(c, queue, dedupKey, columns, options);
  }

  /** The state code of a pending event. */
  static final int PENDING = 0;

  /** An ordered queue's hold marker added to a held row's time_next (QueueConvention.HELD_NS). */
  static final long HELD_NS = 1L << 62;

  /** MySQL's and MariaDB's "Deadlock found when trying to get lock". */
  static final int ER_LOCK_DEADLOCK = 1213;

  /** {@link #insertInGroup(Connection, String, String, Map, EventOptions)} with default options. */
  public static long insertInGroup(
      Connection c, String queue, String groupKey, Map<String, ?> columns) throws SQLException {
    return insertInGroup(c, queue, groupKey, columns, EventOptions.DEFAULTS);
  }

  /**
   * Inserts a child of the event group {@code groupKey} (README, "Event groups"): an event like any
   * other, whose {@code group_key} column holds the key; returns its id. The group's completion
   * event ({@link #insertGroupCompletion}) is delivered once no child of the group is pending or
   * fired. A plain INSERT on the caller's connection: it commits or rolls back with the caller's
   * transaction, which this method leaves as it is. The queue needs the {@code group_key} column
   * and its ({@code group_key}, {@code state}) index ({@code sluice queue create --grouped}).
   *
   * @param groupKey 1 to {@value QueueColumns#GROUP_KEY_MAX_CHARS} characters, compared exactly;
   *     the children and the completion event of a group must be on the same shard
   * @param columns user columns by name; may hold {@code group_key} only with the same value
   * @throws IllegalArgumentException for a bad key, queue or column name (nothing is written)
   * @throws SQLException as the INSERT throws it; the queue without the column: a message that says
   *     so
   */
  public static long insertInGroup(
      Connection c, String queue, String groupKey, Map<String, ?> columns, EventOptions options)
      throws SQLException {
    return insertWithGroupColumn(
        c, queue, QueueColumns.GROUP_KEY, groupKey, columns, options, "--grouped");
  }

  /**
   * {@link #insertGroupCompletion(Connection, String, String, Map, EventOptions)} with default
   * options.
   */
  public static long insertGroupCompletion(
      Connection c, String queue, String groupKey, Map<String, ?> columns) throws SQLException {
    return insertGroupCompletion(c, queue, groupKey, columns, EventOptions.DEFAULTS);
  }

  /**
   * Inserts the completion event of the event group {@code groupKey} (README, "Event groups"): its
   * {@code completes_group} column holds the key; returns its id. The manager delivers it once
   * every child of the group ({@link #insertInGroup}) is acked, dead or cancelled, with their
   * counts; a group completes once, so a second completion event of the same key is made dead. A
   * plain INSERT on the caller's connection: it commits or rolls back with the caller's
   * transaction, which this method leaves as it is. The queue needs the {@code completes_group}
   * column ({@code sluice queue create --completes-groups}).
   *
   * <p>Commit it with the group's children or after them: the group is sealed when the manager
   * first reads the completion event, and a group sealed while none of its children is committed
   * completes at once, with no child counted; a child committed after that is an ordinary event.
   *
   * @param groupKey 1 to {@value QueueColumns#GROUP_KEY_MAX_CHARS} characters, compared exactly
   * @param columns user columns by name; may hold {@code completes_group} only with the same value
   * @throws IllegalArgumentException for a bad key, queue or column name (nothing is written)
   * @throws SQLException as the INSERT throws it; the queue without the column: a message that says
   *     so
   */
  public static long insertGroupCompletion(
      Connection c, String queue, String groupKey, Map<String, ?> columns, EventOptions options)
      throws SQLException {
    return insertWithGroupColumn(
        c, queue, QueueColumns.COMPLETES_GROUP, groupKey, columns, options, "--completes-groups");
  }

  private static long insertWithGroupColumn(
      Connection c,
      String queue,
      String column,
      String groupKey,
      Map<String, ?> columns,
      EventOptions options,
      String createFlag)
      throws SQLException {
    QueueColumns.requireIdentifier("queue name", queue);
    requireGroupKey(queue, groupKey);
    Object given = columns.get(column);
    if (given != null && !given.equals(groupKey)) {
      throw new IllegalArgumentException(
          "queue "
              + queue
              + ": column "
              + column
              + " is '"
              + given
              + "' but the group key given is '"
              + groupKey
              + "'");
    }
    Map<String, Object> withKey = new LinkedHashMap<>(columns);
    withKey.put(column, groupKey);
    Insert insert = statement(c, queue, withKey, options);
    try {
      return execute(c, queue, insert, options);
    } catch (SQLException e) {
      if (e.getErrorCode() == ER_BAD_FIELD_ERROR
          && String.valueOf(e.getMessage()).contains(column)) {
        throw new SQLException(
            "queue "
                + queue
                + " has no "
                + column
                + " column (sluice queue create "
                + createFlag
                + " adds it: README, Event groups): "
                + e.getMessage(),
            e.getSQLState(),
            e.getErrorCode(),
            e);
      }
      throw e;
    }
  }

  /** A group key: 1 to 191 characters (as MySQL counts them: code points). */
  private static void requireGroupKey(String queue, String key) {
    int chars = key == null ? 0 : key.codePointCount(0, key.length());
    if (chars == 0 || chars > QueueColumns.GROUP_KEY_MAX_CHARS) {
      throw new IllegalArgumentException(
          "queue "
              + queue
              + ": a group key must be 1 to "
              + QueueColumns.GROUP_KEY_MAX_CHARS
              + " characters, was "
              + (key == null
                  ? "null"
                  : "'"
                      + (chars > 40 ? key.substring(0, key.offsetByCodePoints(0, 40)) + "..." : key)
                      + "' ("
                      + chars
                      + " characters)"));
    }
  }

  /** MySQL's and MariaDB's "Duplicate entry ... for key ...". */
  static final int ER_DUP_ENTRY = 1062;

  /** MySQL's and MariaDB's "Unknown column ... in 'field list'". */
  static final int ER_BAD_FIELD_ERROR = 1054;

  /** Throws a clear error when {@code e} says the queue has no {@code dedup_key} column. */
  static void noDedupColumn(String queue, SQLException e) throws SQLException {
    if (e.getErrorCode() == ER_BAD_FIELD_ERROR
        && String.valueOf(e.getMessage()).contains(QueueColumns.DEDUP_KEY)) {
      throw new SQLException(
          "queue "
              + queue
              + " has no "
              + QueueColumns.DEDUP_KEY
              + " column (add it and its UNIQUE index "
              + QueueColumns.DEDUP_INDEX
              + ": README, Deduplication): "
              + e.getMessage(),
          e.getSQLState(),
          e.getErrorCode(),
          e);
    }
  }

  /**
   * {@code columns} with {@code dedup_key} set to {@code dedupKey}, after checking the queue name,
   * the key, and that {@code columns} holds no other key.
   */
  static Map<String, Object> withDedupKey(String queue, String dedupKey, Map<String, ?> columns) {
    QueueColumns.requireIdentifier("queue name", queue);
    requireDedupKey(queue, dedupKey);
    Object given = columns.get(QueueColumns.DEDUP_KEY);
    if (given != null && !given.equals(dedupKey)) {
      throw new IllegalArgumentException(
          "queue "
              + queue
              + ": column "
              + QueueColumns.DEDUP_KEY
              + " is '"
              + given
              + "' but the key given is '"
              + dedupKey
              + "'");
    }
    Map<String, Object> withKey = new LinkedHashMap<>(columns);
    withKey.put(QueueColumns.DEDUP_KEY, dedupKey);
    return withKey;
  }

  static void requireDedupKey(String queue, String key) {
    if (key == null || key.isEmpty() || key.length() > QueueColumns.DEDUP_KEY_MAX_CHARS) {
      throw new IllegalArgumentException(
          "queue "
              + queue
              + ": a dedup key must be 1 to "
              + QueueColumns.DEDUP_KEY_MAX_CHARS
              + " characters, was "
              + (key == null ? "null" : key.length() + " characters"));
    }
  }

  /**
   * The id of the row holding {@code key}; null when none does. First a plain read: it touches only
   * the key's index entry, which the failed INSERT has share-locked, so the manager's writes to the
   * row never wait for it. Only when the transaction's snapshot predates the row's commit (under
   * REPEATABLE READ, a transaction that read before) does it find nothing; then a locking read,
   * which sees the latest committed row.
   */
  private static Long existingId(Connection c, String queue, String key) throws SQLException {
    String sql = "SELECT `id` FROM `" + queue + "` WHERE `" + QueueColumns.DEDUP_KEY + "` = ?";
    Long id = firstId(c, sql, key);
    return id != null ? id : firstId(c, sql + " LOCK IN SHARE MODE", key);
  }

  static Long firstId(Connection c, String sql, String key) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, key);
      try (ResultSet r = ps.executeQuery()) {
        return r.next() ? r.getLong(1) : null;
      }
    }
  }

  /** An INSERT statement and its parameters. */
  record Insert(String sql, List<Object> values) {}

  static Insert statement(Connection c, String queue, Map<String, ?> columns, EventOptions options)
      throws SQLException {
    QueueColumns.requireIdentifier("queue name", queue);
    List<String> names = new ArrayList<>();
    List<Object> values = new ArrayList<>();
    List<String> placeholders = new ArrayList<>();
    for (Map.Entry<String, ?> e : columns.entrySet()) {
      String col = QueueColumns.requireIdentifier("column name", e.getKey());
      if (QueueColumns.SYSTEM_COLUMNS.contains(col) && !col.equals(QueueColumns.ACTOR)) {
        throw new IllegalArgumentException(
            "queue "
                + queue
                + ": column '"
                + col
                + "' is a system column; set it through EventOptions instead");
      }
      names.add("`" + col + "`");
      values.add(e.getValue());
      placeholders.add("?");
    }
    // The caller's trace context, for a receiver to continue (only if the table has the column).
    for (Map.Entry<String, String> t : TraceContextColumns.current(c, queue).entrySet()) {
      if (!columns.containsKey(t.getKey())) {
        names.add("`" + t.getKey() + "`");
        values.add(t.getValue());
        placeholders.add("?");
      }
    }
    if (options.id() != null) {
      names.add("`id`");
      values.add(options.id());
      placeholders.add("?");
    }
    if (options.fireAt() != null) {
      names.add("`time_next`");
      Instant at = options.fireAt();
      values.add(at.getEpochSecond() * 1_000_000_000L + at.getNano());
      placeholders.add("?");
    } else if (options.delay() != null && !options.delay().isZero()) {
      names.add("`time_next`");
      values.add(options.delay().toNanos());
      placeholders.add(QueueColumns.NOW_NS_SQL + " + ?");
    }
    if (options.tenant() != null) {
      names.add("`tenant`");
      values.add(options.tenant());
      placeholders.add("?");
    }
    if (options.priority() != null) {
      names.add("`priority`");
      values.add(options.priority());
      placeholders.add("?");
    }
    String sql =
        "INSERT INTO `"
            + queue
            + "` ("
            + String.join(", ", names)
            + ") VALUES ("
            + String.join(", ", placeholders)
            + ")";
    return new Insert(sql, values);
  }

  static long execute(Connection c, String queue, Insert insert, EventOptions options)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(insert.sql(), Statement.RETURN_GENERATED_KEYS)) {
      for (int i = 0; i < insert.values().size(); i++) {
        ps.setObject(i + 1, insert.values().get(i));
      }
      ps.executeUpdate();
      if (options.id() != null) {
        return options.id();
      }
      try (ResultSet keys = ps.getGeneratedKeys()) {
        if (!keys.next()) {
          throw new SQLException("queue " + queue + ": the insert returned no id");
        }
        return keys.getLong(1);
      }
    }
  }

  /**
   * When and how an event fires.
   *
   * @param delay fire this long after now by the database clock (null or zero: now)
   * @param fireAt fire at this absolute time (the application's clock); wins over delay
   * @param tenant fairness root; null keeps the column default
   * @param priority lower fires first; null keeps the column default
   * @param id an application-chosen id; null lets AUTO_INCREMENT choose
   */
  public record EventOptions(
      Duration delay, Instant fireAt, String tenant, Integer priority, Long id) {
    public static final EventOptions DEFAULTS = new EventOptions(null, null, null, null, null);

    public EventOptions {
      if (delay != null && delay.isNegative()) {
        throw new IllegalArgumentException("delay must not be negative, was " + delay);
      }
      if (priority != null && (priority < -128 || priority > 127)) {
        throw new IllegalArgumentException("priority must be in -128..127, was " + priority);
      }
    }

    public static Builder builder() {
      return new Builder();
    }

    /** Builds {@link EventOptions}. */
    public static final class Builder {
      private Duration delay;
      private Instant fireAt;
      private String tenant;
      private Integer priority;
      private Long id;

      public Builder delay(Duration d) {
        this.delay = d;
        return this;
      }

      public Builder fireAt(Instant at) {
        this.fireAt = at;
        return this;
      }

      public Builder tenant(String t) {
        this.tenant = t;
        return this;
      }

      public Builder priority(int p) {
        this.priority = p;
        return this;
      }

      public Builder id(long id) {
        this.id = id;
        return this;
      }

      public EventOptions build() {
        return new EventOptions(delay, fireAt, tenant, priority, id);
      }
    }
  }
}
