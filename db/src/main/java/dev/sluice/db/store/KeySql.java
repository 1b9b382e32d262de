package dev.sluice.db.store;

import static dev.sluice.db.QueueConvention.HELD_NS;

import dev.sluice.db.EventState;
import dev.sluice.db.QueueTable;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The statements of an ordered queue ({@code ordering=key} or {@code queue}). Every one names its
 * keys as values, never as a reference to another row: a key's first pending, fired or dead event
 * and its last pending one are each one seek on the ordering index — (key, state, id), or (state,
 * id) for a queue that is one key — reading one entry, whatever the key's backlog. (A subquery
 * correlated with the outer row — {@code EXISTS (... o.key = t.key and o.id < t.id)}, or the same
 * with {@code ORDER BY id LIMIT 1} — is run by MariaDB and MySQL 8.0 as a lookup on the key and
 * state with the rest as filters, reading every entry of the key: a hot key's whole backlog at each
 * check.) The held rows themselves lie past every poll's range (see {@link
 * dev.sluice.db.QueueConvention#HELD_NS}).
 *
 * <p>Thread-safe: immutable.
 */
final class KeySql {
  private final String table;
  private final String index;
  private final String pollIndex;

  /** The quoted key column; null when the whole queue is one key. */
  private final String column;

  private final String pending;
  private final String fired;
  private final String dead;

  KeySql(QueueTable q) {
    this.table = HotSql.quote(q.name());
    this.index = HotSql.quote(q.orderingIndex());
    this.pollIndex = HotSql.quote(q.pollIndex());
    this.column = q.orderingColumn() == null ? null : HotSql.quote(q.orderingColumn());
    this.pending = literal(q.stateValue(EventState.PENDING));
    this.fired = literal(q.stateValue(EventState.FIRED));
    this.dead = literal(q.stateValue(EventState.DEAD));
  }

  private static String literal(Object v) {
    return v instanceof Number ? v.toString() : "'" + v + "'";
  }

  /** Whether the whole queue is one key (no key column). */
  boolean oneKey() {
    return column == null;
  }

  /** The id of the key's first (or last) row in {@code state}: one seek, one entry. */
  private String edge(String state, boolean last) {
    return "(select `id` from "
        + table
        + " force index ("
        + index
        + ") where "
        + (column == null ? "" : column + " = ? and ")
        + "`state` = "
        + state
        + " order by `id`"
        + (last ? " desc" : "")
        + " limit 1)";
  }

  /**
   * For each key: the key, then the ids of its first pending and first fired event, and — when
   * {@code dead} — of its first dead and its last pending one (else null): one statement. Each seek
   * is a query block the server plans for every key, so only those asked for are read.
   */
  HotSql.Sql firsts(Collection<Object> keys, boolean dead) {
    String one =
        "select "
            + (column == null ? "''" : "?")
            + ", "
            + edge(pending, false)
            + ", "
            + edge(fired, false)
            + ", "
            + (dead ? edge(this.dead, false) : "null")
            + ", "
            + (dead ? edge(pending, true) : "null");
    int perKey = dead ? 5 : 3;
    List<Object> values = new ArrayList<>();
    if (column == null) {
      return new HotSql.Sql(one, values);
    }
    StringBuilder sb = new StringBuilder();
    for (Object k : keys) {
      sb.append(sb.length() == 0 ? "" : " union all ").append(one);
      for (int i = 0; i < perKey; i++) {
        values.add(k);
      }
    }
    return new HotSql.Sql(sb.toString(), values);
  }

  /**
   * Each key's first pending row (held or not), and after its columns its {@link KeyPlace} by
   * ordinal: behind the key's first fired event if that has a lower id, else (with {@code dead})
   * halted behind its first dead one if that has. Three one-entry seeks per key (two without {@code
   * dead}; the key's first pending event is the row itself), in one statement: a turn's read and
   * its check in one round trip.
   *
   * @param select the row's columns, as the polls select them (without FROM)
   */
  HotSql.Sql firstPending(String select, Collection<Object> keys, boolean dead) {
    String one =
        select
            + ", case when "
            + edge(fired, false)
            + " < `id` then "
            + KeyPlace.BEHIND.ordinal()
            + (dead
                ? " when " + edge(this.dead, false) + " < `id` then " + KeyPlace.HALTED.ordinal()
                : "")
            + " else "
            + KeyPlace.FIRST.ordinal()
            + " end from "
            + table
            + " force index ("
            + index
            + ") where "
            + (column == null ? "" : column + " = ? and ")
            + "`state` = "
            + pending
            + " order by `id` limit 1";
    int perKey = dead ? 3 : 2;
    List<Object> values = new ArrayList<>();
    if (column == null) {
      return new HotSql.Sql(one, values);
    }
    StringBuilder sb = new StringBuilder();
    for (Object k : keys) {
      sb.append(sb.length() == 0 ? "(" : " union all (").append(one).append(')');
      for (int i = 0; i < perKey; i++) {
        values.add(k);
      }
    }
    return new HotSql.Sql(sb.toString(), values);
  }

  /**
   * The distinct keys of the rows in {@code state} ({@code held}: only held rows), up to a limit:
   * one read of those rows on the (state, time_next) index. For a queue that is one key, one row
   * when there is any.
   */
  String keysIn(EventState state, boolean held) {
    String st = state == EventState.DEAD ? dead : pending;
    return "select distinct "
        + (column == null ? "''" : column)
        + " from "
        + table
        + " force index ("
        + pollIndex
        + ") where `state` = "
        + st
        + (held ? " and `time_next` >= " + HELD_NS : "")
        + (column == null ? "" : " and " + column + " is not null")
        + " limit ?";
  }

  /** The pending events of a key after an id (the events a halted key holds back). */
  String waitingAfter() {
    return "select count(*) from "
        + table
        + " force index ("
        + index
        + ") where "
        + (column == null ? "" : column + " = ? and ")
        + "`state` = "
        + pending
        + " and `id` > ?";
  }
}
