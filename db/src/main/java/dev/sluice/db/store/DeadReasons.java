package dev.sluice.db.store;

import dev.sluice.db.QueueConvention;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.exception.DataAccessException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Why each dead event died: the Sluice-owned table {@code sluice_dead_reason} (migration {@code
 * V4__sluice_dead_reason.sql}), one row per (queue, id). Rows are written in the transaction that
 * makes the event dead, and removed in the one that replays or purges it.
 *
 * <p>A reason is made safe to store whatever it holds: cut to {@link #MAX_CHARS} characters, with
 * control characters and characters outside the Basic Multilingual Plane replaced by {@code ?} (a
 * connection in 3-byte utf8 would refuse those under a strict sql_mode). Storing a reason never
 * fails because of its text.
 *
 * <p>Stateless; callers pass the context (a transaction's, to write with the state change).
 */
final class DeadReasons {
  private static final Logger log = LoggerFactory.getLogger(DeadReasons.class);
  static final String TABLE = "sluice_dead_reason";

  /** The reason column's width, in characters. */
  static final int MAX_CHARS = 1024;

  private DeadReasons() {}

  /** {@code reason} as it can be stored: never null, at most {@link #MAX_CHARS} characters. */
  static String clean(String reason) {
    if (reason == null) {
      return "";
    }
    StringBuilder sb = new StringBuilder(Math.min(reason.length(), MAX_CHARS));
    for (int i = 0; i < reason.length() && sb.length() < MAX_CHARS; ) {
      int cp = reason.codePointAt(i);
      i += Character.charCount(cp);
      boolean plain = Character.isBmpCodePoint(cp) && !Character.isSurrogate((char) cp);
      sb.append(plain && !Character.isISOControl(cp) ? (char) cp : cp == '\n' ? ' ' : '?');
    }
    if (reason.length() > MAX_CHARS && sb.length() == MAX_CHARS) {
      sb.replace(MAX_CHARS - 3, MAX_CHARS, "...");
    }
    return sb.toString();
  }

  /** Records (or replaces) the reason of each event, at the database's now. */
  static void record(DSLContext tx, String queue, Map<EventRef, String> reasons) {
    if (reasons.isEmpty()) {
      return;
    }
    StringBuilder sql =
        new StringBuilder("INSERT INTO ")
            .append(TABLE)
            .append(" (queue, id, epoch, reason, time_ns) VALUES ");
    List<Object> values = new ArrayList<>(reasons.size() * 4);
    boolean first = true;
    for (Map.Entry<EventRef, String> e : reasons.entrySet()) {
      sql.append(first ? "" : ", ").append("(?, ?, ?, ?, ").append(QueueConvention.NOW_NS_SQL);
      sql.append(")");
      first = false;
      values.add(queue);
      values.add(e.getKey().id());
      values.add(e.getKey().epoch());
      values.add(clean(e.getValue()));
    }
    sql.append(
        " ON DUPLICATE KEY UPDATE epoch = VALUES(epoch), reason = VALUES(reason),"
            + " time_ns = VALUES(time_ns)");
    try {
      tx.execute(sql.toString(), values.toArray());
    } catch (DataAccessException e) {
      // Without the table (Sluice's migrations not applied) the events still die; only the reason
      // is lost. A failed statement does not end the transaction on MySQL or MariaDB.
      if (!missingTable(e)) {
        throw e;
      }
      log.warn("{}: {} is missing, dead reasons not recorded: {}", queue, TABLE, reasons);
    }
  }

  private static boolean missingTable(DataAccessException e) {
    return "42S02".equals(e.sqlState());
  }

  /** Removes the reasons of {@code ids} (replayed or purged). */
  static void remove(DSLContext tx, String queue, Collection<Long> ids) {
    if (ids.isEmpty()) {
      return;
    }
    List<Object> values = new ArrayList<>(ids.size() + 1);
    values.add(queue);
    values.addAll(ids);
    try {
      tx.execute(
          "DELETE FROM " + TABLE + " WHERE queue = ? AND id IN (" + marks(ids.size()) + ")",
          values.toArray());
    } catch (DataAccessException e) {
      if (!missingTable(e)) {
        throw e;
      }
    }
  }

  /**
   * The recorded reason of each of {@code ids} that has one. A shard whose Sluice tables were never
   * migrated (no manager ran there yet) has no reasons: an empty map, not an error.
   */
  static Map<Long, String> read(DSLContext ctx, String queue, Collection<Long> ids) {
    Map<Long, String> out = new HashMap<>();
    if (ids.isEmpty()) {
      return out;
    }
    List<Object> values = new ArrayList<>(ids.size() + 1);
    values.add(queue);
    values.addAll(ids);
    try {
      for (Record r :
          ctx.fetch(
              "SELECT id, reason FROM "
                  + TABLE
                  + " WHERE queue = ? AND id IN ("
                  + marks(ids.size())
                  + ")",
              values.toArray())) {
        out.put(r.get(0, Long.class), r.get(1, String.class));
      }
    } catch (DataAccessException e) {
      if (!missingTable(e)) {
        throw e;
      }
    }
    return out;
  }

  private static String marks(int n) {
    return "?" + ", ?".repeat(n - 1);
  }
}
