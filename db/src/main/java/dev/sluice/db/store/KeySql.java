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

  /**
   * For each key and each of the states pending, fired and (with {@code dead}) dead: the key, the
   * state's {@link EventState} ordinal, the key's first id in that state and (pending, with {@code
   * dead}) its last; null ids when it has none. One statement: a UNION ALL of one block per key and
   * state, {@code select ?, 1, min(id) ... where key = ? and state = 1}, which both servers answer
   * from the ordering index while planning it ("Select tables optimized away": one entry read,
   * whatever the key's backlog).
   *
   * <p>Why this form. Each key is bound as given and compared by the server, so a key's spelling
   * (another case of it under a case-insensitive collation) is the server's business, as in its
   * seeks. The form it replaced, one block per key with a subquery per edge ({@code select ?,
   * (select id ... order by id limit 1), ...}), cost the server about three times the CPU (on
   * MariaDB 10.11, 9.7 ms against 3.4 ms for 256 keys). A GROUP BY over all the keys costs less
   * again, but only when the optimizer picks a loose index scan, which it does not for one key, nor
   * for a key whose backlog the index statistics do not show yet: it then reads every entry.
   */
  HotSql.Sql firsts(Collection<Object> keys, boolean dead) {
    StringBuilder sb = new StringBuilder();
    List<Object> values = new ArrayList<>();
    for (Object k : column == null ? List.<Object>of("") : keys) {
      block(sb, values, k, EventState.PENDING, pending, dead);
      block(sb, values, k, EventState.FIRED, fired, false);
      if (dead) {
        block(sb, values, k, EventState.DEAD, this.dead, false);
      }
    }
    return new HotSql.Sql(sb.toString(), values);
  }

  private void block(
      StringBuilder sb,
      List<Object> values,
      Object key,
      EventState state,
      String stateLiteral,
      boolean last) {
    sb.append(sb.length() == 0 ? "select " : " union all select ")
        .append(column == null ? "''" : "?")
        .append(", ")
        .append(state.ordinal())
        .append(", min(`id`), ")
        .append(last ? "max(`id`)" : "null")
        .append(" from ")
        .append(table)
        .append(" force index (")
        .append(index)
        .append(") where ")
        .append(column == null ? "" : column + " = ? and ")
        .append("`state` = ")
        .append(stateLiteral);
    if (column != null) {
      values.add(key);
      values.add(key);
    }
  }

  /**
   * The rows {@code ids} that are still pending, by primary key (a turn's rows, once {@link
   * #firsts} has named them).
   *
   * @param select the row's columns, as the polls select them (without FROM)
   */
  HotSql.Sql pendingRows(String select, List<Long> ids) {
    return new HotSql.Sql(
        select
            + " from "
            + table
            + " force index (PRIMARY) where `id` in ("
            + "?,".repeat(ids.size() - 1)
            + "?) and `state` = "
            + pending,
        new ArrayList<>(ids));
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
