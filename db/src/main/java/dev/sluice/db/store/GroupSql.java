package dev.sluice.db.store;

import dev.sluice.client.QueueColumns;
import dev.sluice.db.EventState;
import dev.sluice.db.store.GroupStore.ChildCounts;
import dev.sluice.db.store.GroupStore.Group;
import dev.sluice.db.store.GroupStore.Table;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import org.jooq.exception.DataAccessException;

/** The statements and row reading of {@code sluice_group} that {@link JdbcGroupStore} shares. */
final class GroupSql {
  static final String TABLE = "sluice_group";
  static final String SEALED = "sealed";
  static final String COMPLETED = "completed";

  /** {@code on_dead}: a dead child completes the group at once; else it waits for all. */
  static final String FAIL_FAST = "fail_fast";

  static final String WAIT_ALL = "wait_all";

  static String onDead(boolean failFast) {
    return failFast ? FAIL_FAST : WAIT_ALL;
  }

  /** A group's row, as {@link #group} reads it. */
  static final String SELECT_GROUP =
      "SELECT group_key, state, completion_queue, completion_id, completion_epoch, on_dead,"
          + " sealed_ns, completed_ns, acked, dead, cancelled FROM "
          + TABLE;

  /**
   * One statement: the oldest open groups, each row with the count of all of them (a window over
   * the range the state index gives, computed before the LIMIT).
   */
  static String openGroups(int limit) {
    return "SELECT group_key, completion_queue, completion_id, "
        + dev.sluice.client.QueueColumns.NOW_NS_SQL
        + " - sealed_ns, COUNT(*) OVER () FROM sluice_group WHERE state = 'sealed'"
        + " ORDER BY state, sealed_ns LIMIT "
        + limit;
  }

  private GroupSql() {}

  /**
   * For each of {@code groups} and each of {@code grouped}: the group's first child open in that
   * table (pending or fired) and, for a {@code fail_fast} group, its first dead child, each as a
   * row of the key, the table's index in {@code grouped}, the child's {@link EventState} ordinal
   * and its id; no row (or a null id) when it has none. One statement, a UNION ALL of blocks, each
   * answered from the table's group index:
   *
   * <ul>
   *   <li>({@code group_key}), the convention: {@code select ... where group_key = ? and id >= ?
   *       and state in (...) order by id limit 1} (the index's order: its entries end with the
   *       primary key; {@code order by group_key, id} made MariaDB sort the whole group, the
   *       column's binary collation not being the connection's), from {@code seen}'s id on (where
   *       the last check found the group's first open child): the settled children it passes are
   *       read once over the group's checks, not at each. This index moves only when a child is
   *       inserted or deleted, not at its fire and ack. A {@code fail_fast} group's dead block
   *       reads on from there to its first dead child: up to the rest of the group.
   *   <li>({@code group_key}, {@code state}), earlier versions' index: per state {@code select ...,
   *       min(id) where group_key = ? and state = ?}, which both servers answer while planning it,
   *       from one entry, but that index moves at each fire and ack of a child.
   * </ul>
   */
  static String probes(
      List<Table> grouped, List<Group> groups, ChildMarks seen, List<Object> values) {
    StringBuilder sb = new StringBuilder();
    for (Group g : groups) {
      for (int i = 0; i < grouped.size(); i++) {
        Table t = grouped.get(i);
        if (t.stateIndexed()) {
          List<EventState> states = new java.util.ArrayList<>(List.of(OPEN));
          if (g.failFast()) {
            states.add(EventState.DEAD);
          }
          for (EventState s : states) {
            block(sb, i, String.valueOf(s.ordinal()), "MIN(`id`)", t);
            sb.append(" AND `state` = ?)");
            values.add(g.key());
            values.add(g.key());
            values.add(t.stateValue(s));
          }
          continue;
        }
        long from = seen.from(t, g.key());
        block(sb, i, "CASE `state` WHEN ? THEN " + PENDING + " ELSE " + FIRED + " END", "`id`", t);
        sb.append(" AND `id` >= ? AND `state` IN (?, ?) ORDER BY `id` LIMIT 1)");
        values.addAll(
            List.of(
                g.key(),
                t.stateValue(EventState.PENDING),
                g.key(),
                from,
                t.stateValue(EventState.PENDING),
                t.stateValue(EventState.FIRED)));
        if (g.failFast()) {
          block(sb, i, String.valueOf(EventState.DEAD.ordinal()), "`id`", t);
          sb.append(" AND `id` >= ? AND `state` = ? ORDER BY `id` LIMIT 1)");
          values.addAll(List.of(g.key(), g.key(), from, t.stateValue(EventState.DEAD)));
        }
      }
    }
    return sb.toString();
  }

  private static final EventState[] OPEN = {EventState.PENDING, EventState.FIRED};
  private static final int PENDING = EventState.PENDING.ordinal();
  private static final int FIRED = EventState.FIRED.ordinal();

  /** Appends {@code (SELECT ?, i, state, id FROM t WHERE group_key = ?} to a probe statement. */
  private static void block(StringBuilder sb, int i, String state, String id, Table t) {
    sb.append(sb.length() == 0 ? "(SELECT ?, " : " UNION ALL (SELECT ?, ")
        .append(i)
        .append(", ")
        .append(state)
        .append(", ")
        .append(id)
        .append(" FROM `")
        .append(t.name())
        .append("` WHERE `")
        .append(QueueColumns.GROUP_KEY)
        .append("` = ?");
  }

  /** The children of group {@code key} by state, over {@code grouped}, on {@code c}. */
  static ChildCounts childCounts(Connection c, List<Table> grouped, String key)
      throws SQLException {
    long[] by = new long[EventState.values().length];
    for (Table t : grouped) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT `state`, COUNT(*) FROM `"
                  + t.name()
                  + "` WHERE `"
                  + QueueColumns.GROUP_KEY
                  + "` = ? GROUP BY `state`")) {
        ps.setString(1, key);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            EventState s = t.decode(rs.getObject(1));
            if (s != null) {
              by[s.ordinal()] += rs.getLong(2);
            }
          }
        }
      }
    }
    return counts(by);
  }

  /** Counts by state ({@link EventState#ordinal}); none when {@code by} is null. */
  static ChildCounts counts(long[] by) {
    if (by == null) {
      return new ChildCounts(0, 0, 0, 0, 0);
    }
    return new ChildCounts(
        by[EventState.PENDING.ordinal()],
        by[EventState.FIRED.ordinal()],
        by[EventState.ACKED.ordinal()],
        by[EventState.DEAD.ordinal()],
        by[EventState.CANCELLED.ordinal()]);
  }

  static Group group(ResultSet rs) throws SQLException {
    long completed = rs.getLong(8);
    Long completedNs = rs.wasNull() ? null : completed;
    return new Group(
        rs.getString(1),
        rs.getString(2),
        rs.getString(3),
        rs.getLong(4),
        rs.getLong(5),
        rs.getString(6),
        rs.getLong(7),
        completedNs,
        rs.getLong(9),
        rs.getLong(10),
        rs.getLong(11));
  }

  static String marks(int n) {
    return "?" + ",?".repeat(Math.max(0, n - 1));
  }

  static void bind(PreparedStatement ps, List<Object> values, int from) throws SQLException {
    int i = from;
    for (Object v : values) {
      ps.setObject(i++, v);
    }
  }

  static DataAccessException fail(String what, SQLException e) {
    return new DataAccessException(TABLE + ": " + what + " failed: " + e.getMessage(), e);
  }
}
