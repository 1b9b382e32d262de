package dev.sluice.client;

import dev.sluice.client.EventProducer.EventOptions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@link EventProducer#insertDebounced}: the statements of a debounced insert, on the caller's
 * connection and in its transaction. No state: every call stands alone.
 */
final class DebouncedInsert {
  private DebouncedInsert() {}

  /**
   * Debounces the event of {@code dedupKey}: while the row holding the key is still pending, a new
   * call replaces the columns it gives and the due time (now, or {@code options}' delay or fireAt;
   * its tenant and priority if given) of that same event; with no row holding the key, inserts a
   * new event; once the row is fired (or acked, dead, cancelled), writes nothing and returns {@link
   * DebounceOutcome.Result#NOT_PENDING}, as {@link EventProducer#insertUnique} does for a
   * duplicate: the key's UNIQUE index keeps a second row of the key out while the first exists, and
   * rewriting a fired row's columns would change what a receiver is handling.
   *
   * <p>The statements, in the caller's transaction (docs/features/dedup.md, "Debounce"): a plain
   * {@code SELECT id, epoch, state ... WHERE dedup_key = ?}; no row: the INSERT; a row, or a
   * duplicate-key error (1062) of the INSERT: the same SELECT {@code FOR UPDATE}, and a pending row
   * is replaced by a compare-and-set {@code UPDATE ... WHERE id = ? AND state = pending AND epoch =
   * ?} (the epoch is kept: no epoch was delivered). The row stays locked until the caller's
   * transaction ends, so the manager's fire skips it until then, and the fire fires a row only at
   * the due time it polled: a replaced row is read again and fires at its new time, with its new
   * columns. Concurrent first inserts of one key in open transactions may end in a deadlock (1213,
   * the transaction rolled back): retry it as any deadlock (in auto-commit this method retries).
   *
   * @param dedupKey 1 to 255 characters, compared exactly
   * @param columns user columns by name (those not given keep their values on a replace); may hold
   *     {@code dedup_key} only with the same value
   * @param options as with insert, but with no id
   * @throws IllegalArgumentException for a bad key, queue or column name, or an id in {@code
   *     options} (nothing is written)
   */
  static DebounceOutcome run(
      Connection c, String queue, String dedupKey, Map<String, ?> columns, EventOptions options)
      throws SQLException {
    Map<String, Object> withKey = EventProducer.withDedupKey(queue, dedupKey, columns);
    if (options.id() != null) {
      throw new IllegalArgumentException(
          "queue " + queue + ": a debounced insert takes no id (the key names the event)");
    }
    EventProducer.Insert insert = EventProducer.statement(c, queue, withKey, options);
    for (int attempt = 1; ; attempt++) {
      try {
        DebounceOutcome done = debounceOnce(c, queue, dedupKey, withKey, options, insert);
        if (done != null) {
          return done;
        }
        if (attempt >= 5) {
          throw new SQLException(
              "queue " + queue + ": the debounce of key '" + dedupKey + "' found no stable row");
        }
      } catch (SQLException e) {
        EventProducer.noDedupColumn(queue, e);
        if (e.getErrorCode() != EventProducer.ER_LOCK_DEADLOCK
            || !c.getAutoCommit()
            || attempt >= 5) {
          throw e;
        }
      }
    }
  }

  /**
   * One pass of a debounce; null when the row changed under it (read again). A plain read first:
   * when it finds no row the INSERT runs without any lock taken before it (a locking read of an
   * absent key would lock the gap of the index, and two such transactions inserting into one gap
   * deadlock); when it finds the row, or the INSERT finds it (1062), a locking read of the row.
   */
  private static DebounceOutcome debounceOnce(
      Connection c,
      String queue,
      String key,
      Map<String, Object> withKey,
      EventOptions options,
      EventProducer.Insert insert)
      throws SQLException {
    String read =
        "SELECT `id`, `epoch`, `state` FROM `"
            + queue
            + "` WHERE `"
            + QueueColumns.DEDUP_KEY
            + "` = ?";
    if (EventProducer.firstId(c, read, key) == null) {
      try {
        return new DebounceOutcome(
            EventProducer.execute(c, queue, insert, options), DebounceOutcome.Result.INSERTED);
      } catch (SQLException e) {
        if (e.getErrorCode() != EventProducer.ER_DUP_ENTRY) {
          throw e;
        }
        // Another transaction holds the key (its row is newer than this one's snapshot).
      }
    }
    try (PreparedStatement ps = c.prepareStatement(read + " FOR UPDATE")) {
      ps.setString(1, key);
      try (ResultSet r = ps.executeQuery()) {
        if (!r.next()) {
          return null; // purged in between: insert again
        }
        long id = r.getLong(1);
        long epoch = r.getLong(2);
        if (r.getInt(3) != EventProducer.PENDING) {
          return new DebounceOutcome(id, DebounceOutcome.Result.NOT_PENDING);
        }
        return replace(c, queue, id, epoch, withKey, options)
            ? new DebounceOutcome(id, DebounceOutcome.Result.REPLACED)
            : null;
      }
    }
  }

  /** The compare-and-set of a debounce on a pending row; true when it changed the row. */
  private static boolean replace(
      Connection c,
      String queue,
      long id,
      long epoch,
      Map<String, Object> withKey,
      EventOptions options)
      throws SQLException {
    List<String> sets = new ArrayList<>();
    List<Object> values = new ArrayList<>();
    for (Map.Entry<String, Object> e : withKey.entrySet()) {
      if (!e.getKey().equals(QueueColumns.DEDUP_KEY)) {
        sets.add("`" + e.getKey() + "` = ?");
        values.add(e.getValue());
      }
    }
    for (Map.Entry<String, String> t : TraceContextColumns.current(c, queue).entrySet()) {
      if (!withKey.containsKey(t.getKey())) {
        sets.add("`" + t.getKey() + "` = ?");
        values.add(t.getValue());
      }
    }
    // The new due time; an ordered queue's hold marker (time_next + 2^62) is kept as it is.
    String due;
    if (options.fireAt() != null) {
      Instant at = options.fireAt();
      due = "?";
      values.add(at.getEpochSecond() * 1_000_000_000L + at.getNano());
    } else if (options.delay() != null && !options.delay().isZero()) {
      due = QueueColumns.NOW_NS_SQL + " + ?";
      values.add(options.delay().toNanos());
    } else {
      due = QueueColumns.NOW_NS_SQL;
    }
    sets.add(
        "`time_next` = "
            + due
            + " + IF(`time_next` >= "
            + EventProducer.HELD_NS
            + ", "
            + EventProducer.HELD_NS
            + ", 0)");
    if (options.tenant() != null) {
      sets.add("`tenant` = ?");
      values.add(options.tenant());
    }
    if (options.priority() != null) {
      sets.add("`priority` = ?");
      values.add(options.priority());
    }
    String sql =
        "UPDATE `"
            + queue
            + "` SET "
            + String.join(", ", sets)
            + " WHERE "
            + AckSql.guard(1, String.valueOf(EventProducer.PENDING));
    values.add(id);
    values.add(epoch);
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < values.size(); i++) {
        ps.setObject(i + 1, values.get(i));
      }
      return ps.executeUpdate() == 1;
    }
  }
}
