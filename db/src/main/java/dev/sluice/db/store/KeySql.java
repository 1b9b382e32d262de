package dev.sluice.db.store;

import static dev.sluice.db.QueueConvention.HELD_NS;

import dev.sluice.db.EventState;
import dev.sluice.db.QueueTable;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The statements of an ordered queue ({@code ordering=key} or {@code queue}): where a polled row
 * stands in its key, each key's first pending row, the held rows whose turn it is, and the halted
 * keys. Every key check is an index range on the queue's ordering index — (key, state, id), or
 * (state, id) for a queue that is one key — that stops at its first entry, so its cost does not
 * grow with a key's backlog; the held rows themselves lie past every poll's range (see {@link
 * dev.sluice.db.QueueConvention#HELD_NS}).
 *
 * <p>Thread-safe: immutable.
 */
final class KeySql {
  private final String table;
  private final String index;

  /** The quoted key column; null when the whole queue is one key. */
  private final String column;

  private final boolean halt;
  private final String pending;
  private final String fired;
  private final String dead;

  KeySql(QueueTable q) {
    this.table = HotSql.quote(q.name());
    this.index = HotSql.quote(q.orderingIndex());
    this.column = q.orderingColumn() == null ? null : HotSql.quote(q.orderingColumn());
    this.halt = q.options().haltOnDead();
    this.pending = literal(q.stateValue(EventState.PENDING));
    this.fired = literal(q.stateValue(EventState.FIRED));
    this.dead = literal(q.stateValue(EventState.DEAD));
  }

  private static String literal(Object v) {
    return v instanceof Number ? v.toString() : "'" + v + "'";
  }

  /** The same key as the row {@code outer} names ({@code o} is the inner row). */
  private String sameKey(String outer) {
    return column == null ? "" : "o." + column + " = " + outer + "." + column + " and ";
  }

  /**
   * An earlier row of {@code outer}'s key in one of {@code states} exists: per state, the key's
   * first row in that state — one seek on the (key, state, id) index, reading one entry — compared
   * with the outer row's id. (An {@code EXISTS} with {@code o.id < outer.id} reads the same, but
   * MariaDB runs it as a lookup on the key alone, with the state and id as filters: it walks every
   * entry of the key — its whole backlog and history — whenever nothing is ahead of the row, which
   * is every head.)
   */
  private String earlier(String outer, String... states) {
    StringBuilder sb = new StringBuilder("(");
    for (String st : states) {
      sb.append(sb.length() == 1 ? "" : " or ")
          .append("coalesce((select o.`id` from ")
          .append(table)
          .append(" o force index (")
          .append(index)
          .append(") where ")
          .append(sameKey(outer))
          .append("o.`state` = ")
          .append(st)
          .append(" order by o.`id` limit 1) < ")
          .append(outer)
          .append(".`id`, 0)");
    }
    return sb.append(')').toString();
  }

  /**
   * The two columns a poll adds for each row (after the user columns): whether it is behind an
   * earlier pending or fired event of its key, and whether it is behind a dead one in a queue that
   * halts. A NULL key matches no other row: such a row is always first.
   */
  String placeColumns() {
    return ", "
        + earlier(table, pending, fired)
        + " as `sluice_behind`, "
        + (halt ? earlier(table, dead) : "0")
        + " as `sluice_halted`";
  }

  /**
   * Each key's first pending row (held or not), with its place: one index seek per key, in one
   * statement.
   *
   * @param select the row's columns, as the polls select them (without FROM)
   */
  HotSql.Sql firstPending(String select, Collection<Object> keys) {
    List<Object> values = new ArrayList<>();
    StringBuilder sb = new StringBuilder();
    String one =
        select
            + placeColumns()
            + " from "
            + table
            + " force index ("
            + index
            + ") where "
            + (column == null ? "" : column + " = ? and ")
            + "`state` = "
            + pending
            + " order by `id` limit 1";
    if (column == null) {
      return new HotSql.Sql(one, values);
    }
    for (Object k : keys) {
      sb.append(sb.length() == 0 ? "(" : " union all (").append(one).append(')');
      values.add(k);
    }
    return new HotSql.Sql(sb.toString(), values);
  }

  /**
   * Held rows whose turn it is — no earlier event of their key pending or fired, nor (halting) dead
   * — by id and epoch: a promotion the leader did not make (it died between an event's ack and the
   * next one's release, or the earlier event was cancelled or changed by hand). Reads the held
   * rows, each with one seek.
   */
  String heldFirst(String pollIndex) {
    return "select `id`, `epoch` from "
        + table
        + " force index ("
        + HotSql.quote(pollIndex)
        + ") where `state` = "
        + pending
        + " and `time_next` >= "
        + HELD_NS
        + " and not "
        + earlier(table, pending, fired)
        + (halt ? " and not " + earlier(table, dead) : "")
        + " order by `time_next`, `id` limit ?";
  }

  /**
   * The keys that have held rows, up to a limit: a new leader's list of keys to watch (one read of
   * the held rows, at its first pass). For a queue that is one key, one row when any is held.
   */
  String heldKeys(String pollIndex) {
    return "select distinct "
        + (column == null ? "''" : column)
        + " from "
        + table
        + " force index ("
        + HotSql.quote(pollIndex)
        + ") where `state` = "
        + pending
        + " and `time_next` >= "
        + HELD_NS
        + " limit ?";
  }

  /**
   * Halted keys: a key's first dead event with pending events behind it, by id — the key, the dead
   * event's id, and (when {@code counted}) how many events wait behind it, else 1. For a queue that
   * is one key, the key is empty. Reads the dead rows, each with two one-entry seeks (and, counted,
   * the waiting rows of the halted keys).
   */
  String halted(boolean counted) {
    String key = column == null ? "''" : "d." + column;
    String behind =
        " from "
            + table
            + " n force index ("
            + index
            + ") where "
            + (column == null ? "" : "n." + column + " = d." + column + " and ")
            + "n.`state` = "
            + pending;
    return "select "
        + key
        + ", d.`id`, "
        + (counted ? "(select count(*)" + behind + " and n.`id` > d.`id`)" : "1")
        + " as waiting from "
        + table
        + " d where d.`state` = "
        + dead
        + (column == null ? "" : " and d." + column + " is not null")
        + " and not "
        + earlier("d", dead)
        + " and coalesce((select n.`id`"
        + behind
        + " order by n.`id` desc limit 1) > d.`id`, 0)"
        + " order by d.`id` limit ?";
  }
}
